// RecoveredEndState: where recovery takes the end state of each path of a
// session whose supervisor died: the tree as it is now, or the session's
// last saved state of the path (its post-image, or what its last call left)
// when the tree was changed after the session ended (a `git checkout`, a
// `git clean`, an `rm -rf` between guard's death and the next guard
// command). The rule (docs/durability.md, "What recovery does"):
//
//  - no saved state: the tree, as before post-images existed (flagged
//    kEndNotSaved when the tree changed after the supervisor's last
//    heartbeat: the session's last work on it was never saved);
//  - the tree still holds the saved state (same signature, or same type,
//    mode, target and content): that state;
//  - the tree differs in a way no process of the session could have made
//    without a call the journal would hold (a post-image saved while nobody
//    had the file open for writing; a path removed, created or replaced by
//    another inode since; another type): the saved state, flagged
//    kChangedAfterEnd;
//  - a regular file saved while a writer still had it open, same inode,
//    different content: the session may have written it since, so the
//    clock decides: changed after the supervisor's last heartbeat (its
//    ctime is later), the saved state (kChangedAfterEnd); else the tree.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "supervisor/capture/recorder.h"

namespace guard {

// When the supervisor of the session in `session_dir` was last alive: the
// mtime of its heartbeat file (sessions/<id>/alive), in ns; 0 if unknown.
int64_t SupervisorLastAlive(const std::string& session_dir);

class RecoveredEndState final : public EndStateReader {
 public:
  // `alive_ns`: SupervisorLastAlive, 0 if unknown (then the clock never
  // says "changed after").
  RecoveredEndState(const SessionHistory* history, BlobStore* store, std::string root, int64_t alive_ns);

  void AddPaths(std::set<std::string>* paths) const override;
  Status Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
              uint32_t* flags) override;

  size_t kept_saved() const { return kept_saved_; }            // ended in its saved state: the tree differs
  size_t end_not_saved() const { return end_not_saved_; }      // changed after the end, nothing saved

 private:
  // Whether the tree holds `saved` at `abs` (lstat `st`, `exists`).
  bool Holds(const FileState& saved, const std::string& abs, bool exists, const struct stat& st) const;
  // Whether `rel` (or, when it is gone, the deepest path above it that is
  // still there, found from the root down without following a symlink) was
  // changed after the supervisor's last heartbeat.
  bool ChangedAfterDeath(const std::string& rel, bool exists, const struct stat& st) const;

  const SessionHistory* history_;
  BlobStore* store_;
  const std::string root_;
  const int64_t alive_ns_;
  std::atomic<size_t> kept_saved_{0};
  std::atomic<size_t> end_not_saved_{0};
};

}  // namespace guard
