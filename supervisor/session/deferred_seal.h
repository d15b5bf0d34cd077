// The deferred seal: once every process of a session has ended and its last
// records are written, guard hands the command's status back to the caller
// and seals the session after, in its supervisor process (the back,
// front_process.h): the final states, the last group commit, meta.json,
// the end checkpoint and the automatic gc start cost the caller nothing.
//
// While that seal runs, the session's directory holds an empty file
// `sealing` and the supervisor holds the session's `recovery.lock`
// exclusively (the lock recovery takes while it seals a session, and gc
// before it removes one). So:
//   - a command that reads the session waits for the lock (WaitForSeals):
//     it never sees a session half sealed;
//   - a sealer killed (SIGKILL, OOM) leaves `sealing` with the lock free:
//     the next command completes the session. If meta.json still says
//     running, recovery seals it (recovery.h, "recovered"); if the sealer
//     died after meta.json, only what comes after it is left, the end
//     checkpoint (CompleteLeftSeal). Either way `sealing` goes last.
// `sealing` is removed before the lock is let go, so a free lock with
// `sealing` beside it always means a sealer that died.
#pragma once

#include <cstdint>
#include <string>

#include "common/state_dir.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class SealInProgress {
 public:
  SealInProgress() = default;
  SealInProgress(SealInProgress&&) = default;
  SealInProgress& operator=(SealInProgress&&) = default;
  // Marks session directory `dir` as being sealed and takes its lock (it
  // waits for a gc that holds it a moment).
  static Status Begin(const std::string& dir, SealInProgress* out);
  // The seal is whole: removes `sealing`, then lets the lock go. Going
  // without End (a failure) leaves `sealing` for the next command.
  void End();
  bool active() const { return lock_.get() >= 0; }

 private:
  std::string dir_;
  UniqueFd lock_;
};

// How long a command waits for a session's seal before it says so, and
// before it goes on without it (the sealer is stuck: stopped, or on a disk
// that does not answer).
struct SealWait {
  bool quiet = false;
  int64_t word_after_ns = 1'000000000LL;
  int64_t give_up_after_ns = 120'000000000LL;
};

// Waits until no session of `root` (every root if it is empty) is being
// sealed: each one whose `sealing` lock is held. One line on stderr when a
// wait lasts past `how.word_after_ns` (unless quiet), another if it gives up.
void WaitForSeals(const StateDir& state, const std::string& root, const SealWait& how);

// Whether session directory `dir` holds `sealing` (a seal under way, or one
// a dead sealer left).
bool SealMarked(const std::string& dir);

// For a session that is no longer running whose sealer died after it wrote
// meta.json: when `sealing` is there and its lock free, runs `finish` (the
// end checkpoint) under the lock, then removes `sealing`. Returns whether
// it did.
bool CompleteLeftSeal(const std::string& dir, void (*finish)(const std::string& id), const std::string& id);

// Removes `sealing` from `dir`; the caller holds the lock (recovery).
void ClearSealMark(const std::string& dir);

// TEST ONLY: GUARD_TEST_PAUSE_SEAL=STEP:PATH makes the deferred seal, at
// step STEP, write its pid into PATH and wait until the test removes it (at
// most 60 s), so that a test can run a command beside the seal, or SIGKILL
// the sealer there. Steps:
//   start       the caller has its status; nothing of the seal is done
//   checkpoint  meta.json is sealed; the end checkpoint not yet written
// Unset (the only case outside tests): returns at once.
void SealTestPause(const char* step);

}  // namespace guard
