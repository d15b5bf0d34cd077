// git's own files in a restore plan (docs/restore.md, "git's own files").
//
// A session that ran git changed files inside .git that git reads as a
// database rather than as files: objects (content-addressed, written once),
// refs (moved by compare-and-swap), the index (one entry per path). Restored
// file by file, any later `git add` or `git status` by the user would be a
// conflict for the whole index, and an undo would remove objects the user's
// own commits may have come to use. PlanGitState takes those paths out of
// the file-level plan:
//  - objects are never removed nor rewritten; a missing one is written back
//    (its content is its name, so the copy is exact);
//  - HEAD and refs/... become GitRefGoals, the index a GitIndexGoal: the
//    git layer (supervisor/git/git_state_restore.h) moves each ref back if
//    it still holds what the session left, and sets the index entries of the
//    paths whose entries the session changed, keeping the user's others;
//  - hooks and config are restored as any file, even when changed since
//    (git runs or obeys them: what the agent put there must not stay);
//  - the rest of .git (packed-refs, logs, rebase or merge state) is restored
//    as any file, but a conflict there is left as it is, for that path
//    alone: it never stops the restore of the work tree.
// A repository the session created (its .git absent at the target) or that
// is gone now is restored as any directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/session_history.h"
#include "common/status.h"

namespace guard {

class SafeTree;
struct RestorePlan;

// A ref value: "" (no such ref), "ref: NAME" (symbolic), 40 hex digits, or
// kRefInPackedRefs: no loose ref, and the session left packed-refs
// untouched, so whatever packed-refs says (read from the tree by the git
// layer). Where the session changed packed-refs, the value is read from
// the journal's packed-refs of the same moment instead.
inline constexpr const char* kRefInPackedRefs = "packed";

struct GitRefGoal {
  std::string git_dir;  // root-relative: ".git", "sub/.git"
  std::string name;     // "HEAD", "refs/heads/main"
  std::string target;   // what the restore wants it to hold
  // What it may hold now for the restore to move it (the session's end for
  // an undo, the state before it for a replay); anything else is a conflict.
  std::vector<std::string> expected;
};

struct GitIndexGoal {
  std::string git_dir;
  FileState target;                 // the index file at the target (kAbsent: none)
  std::vector<FileState> expected;  // the index files the tree may hold now (content known)
};

struct GitStatePlan {
  std::vector<GitRefGoal> refs;
  std::vector<GitIndexGoal> indexes;
  size_t objects_kept = 0;        // objects (and their directories) an undo leaves: git gc prunes them
  std::vector<std::string> left;  // "path: why": changed since the session, left as it is
  bool empty() const { return refs.empty() && indexes.empty() && left.empty(); }
};

// Moves the paths of `plan` inside kept repositories' .git directories into
// plan->git, as above. `expected_at`: the boundaries the tree may be in now.
Status PlanGitState(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                    const std::vector<uint64_t>& expected_at, RestorePlan* plan);

// The value of ref `name` in packed-refs content, "" when it has none.
std::string PackedRefValue(const std::string& packed, const std::string& name);

// The value a loose ref file holds ("ref: NAME" or the hex id), or false
// when it is neither.
bool ParseLooseRef(const std::string& content, std::string* value);

}  // namespace guard
