// Planning and applying a restore: `guard undo` (back to the state before the
// session, or before operation SEQ) and `guard replay` (forward to the state
// the session left, or just after operation SEQ). Specified in docs/restore.md.
//
// The target state of every path the session touched, under every name it
// had through the session's directory moves (supervisor/restore_names.h),
// comes from SessionHistory::StateAfter. Applying it is two passes over
// those paths: removals deepest first, then creations and updates
// shallowest first, every file written from the store. A moved directory is
// therefore rebuilt under its old name from the copies the session saved,
// not renamed back: the result does not depend on how the moves nested.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/status.h"
#include "supervisor/restore/git_state_plan.h"
#include "supervisor/restore/safe_tree.h"

namespace guard {

enum class RestoreDirection { kUndo, kReplay };

struct RestoreRequest {
  RestoreDirection direction = RestoreDirection::kUndo;
  uint64_t to_seq = 0;             // 0: the whole session
  std::vector<std::string> paths;  // root-relative; empty: every path
  // Undo only: path -> id of another session that changed it while this one
  // ran (supervisor/restore/overlapping_sessions.h); each is a conflict.
  std::map<std::string, std::string> changed_by_others;
  // The target state given as a boundary itself (a redo, the finish of an
  // interrupted restore: restore_chain.h), instead of by to_seq.
  bool exact_boundary = false;
  uint64_t boundary = 0;
  // The states (boundaries) the tree may be in now: a path in none of them
  // that is not already the target is a conflict. Empty: the session's end
  // for an undo, the state before it for a replay. A restore chain
  // (restore_chain.h) gives the state its last restore left, and both ends
  // of an interrupted one.
  std::vector<uint64_t> expected;
  // A path may also be absent now: an interrupted restore removed what
  // was there (its session saved it) before it could put the target in.
  bool absent_expected = false;
  // Finishing an interrupted restore (restore_chain.h): when it started. A
  // power loss within the durability window can keep a file it wrote under
  // its name with its content lost (empty, or of the right size with the
  // blocks never written), and a kill can cut short a file it was writing
  // in place (SafeTree::WriteNewFile); such a file (the target's type and
  // mode, no larger than the target, changed since then) is taken as that
  // restore's unfinished write, not as a conflict: restored again, what it
  // holds saved first by the restore's own session. 0: not finishing.
  int64_t unfinished_since_ns = 0;
};

struct RestoreItem {
  std::string path;
  FileState current;
  FileState target;
  bool conflict = false;  // current is neither the expected state nor the target
  std::string why;        // for a conflict, when there is more to say than "changed since"
  // `path` lies below a symlink that the restore replaces by a directory:
  // it is not there now, whatever is below the symlink's target.
  bool below_replaced_symlink = false;
  // What the plan saw: whether `current` was already the target, and the
  // inode and ctime it had then. ApplyRestore takes the plan's word for a
  // path whose lstat still shows the same, instead of hashing it again.
  bool matched = false;
  uint64_t seen_ino = 0;
  int64_t seen_ctime_ns = 0;
};

struct RestorePlan {
  RestoreDirection direction = RestoreDirection::kUndo;
  uint64_t boundary = 0;             // targets are StateAfter(path, boundary)
  std::vector<RestoreItem> targets;   // every path with a known target, sorted by path
  std::vector<RestoreItem> changes;   // those whose present state differs from the target
  std::vector<std::string> unknown;  // "path: why" for paths left as they are
  std::vector<std::string> notes;    // "path: what": changed, but with something to say
  GitStatePlan git;                  // refs, the index, objects: restored the git way (git_state_plan.h)
  size_t conflicts() const;
};

Status PlanRestore(const SessionHistory& history, const SafeTree& tree, const BlobStore& store,
                   const RestoreRequest& request, RestorePlan* plan);

struct RestoreResult {
  size_t changed = 0;
  std::vector<std::string> failed;  // "path: reason", one per path not restored
  bool stopped = false;             // `stop` said so before the plan was applied whole
};

// Applies `plan` (conflicting paths included: the caller decides whether to
// proceed with conflicts). Syncs what it wrote before returning.
// `progress` (may be empty) is called as paths are done: done, total.
// `stop` (may be empty) is asked before each change: once it says true, the
// restore stops at a consistent point: the changes made stay, the files
// staged but not renamed into place are removed, directory modes are
// finished as for a whole restore, and everything is synced.
Status ApplyRestore(const RestorePlan& plan, const BlobStore& store, SafeTree* tree, RestoreResult* result,
                    const std::function<void(size_t, size_t)>& progress = {},
                    const std::function<bool()>& stop = {});

// "modify", "create", "remove", "chmod", ... for listing a change.
std::string DescribeChange(const RestoreItem& c);

}  // namespace guard
