// RestoreSession: the session `guard undo` and `guard replay` record of
// themselves. They run untraced: the restore knows every change it makes,
// and tells each to a Capture (supervisor/capture/capture.h) before making
// it, as the tracer would tell it of the same call (SafeTree::SetSink), so
// the journal holds exactly the records a traced run of the restore would
// have: the pre-image of what a change replaces or removes (a file removed
// or renamed over adopted into the store by hard link where the store's
// rules allow, else copied), committed before the change. The session can
// therefore be undone (`guard undo --session ID`), listed and shown like any
// other, and a restore killed at any point is recovered as one: it is
// "running" with this process as its supervisor until Seal.
//
// Durability against power loss: no group commit thread, whose syncs hold
// appends off (the restore's own changes would wait for each); instead the
// records are synced, with the blobs they name, just before each sync of the
// restore's own changes (its staged files, then its directories: Commit)
// and at the seal. A power loss before the restore's first sync can keep
// removals whose records were lost; their pre-images stay in the store's
// pending area, which recovery keeps (orphan_pending.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/state_dir.h"
#include "common/status.h"
#include "supervisor/capture/capture.h"
#include "supervisor/capture/recorder.h"

namespace guard {

class RestoreSession {
 public:
  // Creates the session of a restore of `root` (absolute, canonical) run
  // as `argv` (recovery reads argv[1], "__restore"), with `account` (which
  // session it restores, from which state to which: restore_chain.h) in
  // its meta.json.
  static Status Start(const StateDir& state, const std::string& root, std::vector<std::string> argv,
                      const RestoreOf& account, std::unique_ptr<RestoreSession>* out);

  const std::string& id() const { return id_; }
  // Where the restore tells its changes.
  MutationSink* sink() { return capture_.get(); }
  uint64_t refused() const { return capture_->refused(); }
  // Makes every record so far durable, with the blobs they name: called
  // before the restore makes its own changes durable (SafeTree::SetBeforeSync).
  Status Commit();

  // Ends the session with the restore's exit status. `written`: the files
  // the restore wrote (SafeTree::written), whose end state it knows without
  // reading them back, as long as the tree still holds what it wrote.
  // `interrupted_by`: the signal that stopped the restore before it applied
  // its whole plan (0: it did), with `done` of the plan's paths changed; the
  // session is then sealed "killed" by that signal, its account
  // interrupted, for the same command typed again to finish.
  Status Seal(int exit_code, const std::map<std::string, FileState>& written, int interrupted_by = 0,
              uint64_t done = 0);
  // The paths whose end state the seal recorded (valid after Seal).
  size_t changed_count() const { return recorder_->changed_count(); }

 private:
  RestoreSession() = default;

  std::string id_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<BlobStore> store_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<Capture> capture_;
};

}  // namespace guard
