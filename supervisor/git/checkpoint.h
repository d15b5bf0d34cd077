// Checkpoints: commits of a session's state onto refs/guard/<session-id>,
// a chain whose first parent is the commit HEAD named when the session
// started (SessionMeta::git_head) and each next one's the previous
// checkpoint. They are ordinary git history: `git log refs/guard/<id>`,
// `git diff HEAD refs/guard/<id>`, `git push REMOTE 'refs/guard/*'`.
//
// Writing one never touches HEAD, the index, a branch, the stash, the
// configuration or a work-tree file: it adds one pack (object_pack.h) and
// writes one ref. The tree is the parent's plus the session's state of the
// paths it touched (session_tree.h), read from guard's store.
#pragma once

#include <cstdint>
#include <string>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/state_dir.h"
#include "common/status.h"
#include "supervisor/review/session_changes.h"

namespace guard {

// "refs/guard/<id>".
std::string CheckpointRef(const std::string& session_id);

struct CheckpointResult {
  bool no_repository = false;  // the root is not in a git work tree: nothing done
  bool written = false;   // false: nothing changed since the parent
  std::string commit;     // the new checkpoint (or the ref's, when unchanged)
  std::string parent;     // "" for a root commit (HEAD was unborn at the start)
  size_t paths = 0;       // paths written or removed relative to the parent
  size_t unknown = 0;     // touched paths whose state is not saved yet
  size_t in_submodule = 0;  // touched paths inside submodules: left to the submodule
};

struct CheckpointRequest {
  const SessionHistory* history = nullptr;
  const BlobStore* store = nullptr;
  std::string state_dir;          // canonical: never committed
  uint64_t to_seq = kSessionEnd;  // the session's state just after this operation
  std::string message;            // "" : a summary of the session
  std::string at_label;           // "@N LABEL" of the mark `to_seq` came from, for the message
  std::string blob_ids;           // the session's BlobIdCache (stored_blob.h); "": none
};

// Writes a checkpoint of the session's state (up to `to_seq`) when it
// differs from the last checkpoint's (or from HEAD at the start, for the
// first). Nothing, and no error, when the session's root is not in a git
// work tree (out->no_repository).
Status WriteCheckpoint(const CheckpointRequest& request, CheckpointResult* out);

// WriteCheckpoint for session `id` as its journal stands now (a running
// session: its post-images so far; a dead one after recovery: its end).
// `at_mark` (a mark as --to takes it: @N or a label), when given, sets the
// state to the mark's and names it in the message; a mark the session does
// not have is kInvalidArgument. A checkpoint that fails is tried once
// more; the outcome is noted in the session (checkpoint_failure.h).
Status CheckpointSession(const StateDir& state, const std::string& id, uint64_t to_seq,
                         const std::string& message, CheckpointResult* out, const std::string& at_mark = "");

// Whether `root` (absolute, canonical) may lie in a git work tree, as
// WriteCheckpoint looks for one (false only when WriteCheckpoint would find
// none, a broken repository being its to report): a caller that only wants a checkpoint if
// there is a repository asks this before loading the session's history,
// which for a large session costs far more memory than the answer.
bool InGitWorkTree(const std::string& root, const std::string& state_dir);

// Whether guard writes checkpoints of this session on its own: not of the
// sessions that apply an undo or a replay (`guard __restore`).
bool TakesAutomaticCheckpoints(const SessionMeta& meta);

// The commit HEAD names in the work tree around `root` ("" when there is
// none, or HEAD is unborn): recorded as SessionMeta::git_head.
std::string GitHeadAt(const std::string& root, const std::string& state_dir);

// The one-line summary of a session used as the first line of its
// checkpoint and commit messages: "guard session ID: COMMAND".
std::string SessionSummaryLine(const SessionMeta& meta);

// The turn marks (not the steps) of the session up to operation `to_seq`,
// as lines for a commit message: "Marks:\n  @1 LABEL\n  @3 LABEL\n" (at
// most 20, then how many more); "" when it has none.
std::string SessionMarksLines(const SessionHistory& history, uint64_t to_seq = kSessionEnd);

}  // namespace guard
