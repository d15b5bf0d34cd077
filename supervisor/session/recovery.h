// Recovery: completing a session whose supervisor died (SIGKILL, OOM, power
// loss) before it could seal it. A session is orphaned when meta.json still
// says "running" and its supervisor (pid and start time) is gone.
//
// Recovery cuts the journal's torn tail, records what a watch session
// changed after its watcher's last round (watch_catch_up.h), resolves the blobs the supervisor had
// adopted by hard link but not yet hashed, records the final state of every
// path the session touched (the tracees died with the supervisor, through
// PTRACE_O_EXITKILL, so the tree is as the session left it), and marks the
// session "recovered" with the time of its last record as its end. For a
// restore session it first removes the files the restore had staged but not
// yet renamed into place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

struct RecoveryReport {
  std::string id;
  uint64_t dropped_bytes = 0;  // torn journal tail cut off
  size_t resolved_blobs = 0;
  // The session's pending blobs that no surviving record names
  // (orphan_pending.h): kept as the only copy of their content, or removed.
  size_t unrecorded_kept = 0;
  size_t unrecorded_removed = 0;
  std::string incomplete;  // LogIncompleteLine of the session ("" when its log is whole)
  size_t final_states = 0;
  size_t kept_saved = 0;     // paths changed after the session ended: their saved work is the end
  size_t end_not_saved = 0;  // ... and nothing saved of the session's last work on them
  size_t staged_removed = 0;
  // Watch mode (watch_catch_up.h): changes made after the watcher's last
  // round, recorded now as the session's, and those made after its
  // processes stopped, left out.
  size_t caught_up = 0;
  size_t caught_up_after_end = 0;
  uint64_t ring_calls = 0;    // --mode auto: the shim's calls left in the ring, now recorded  // of an interrupted restore: its staged copies (common/staged_name.h)
  double seconds = 0;
  std::vector<std::string> problems;  // journal damage found while reading
  // A half-made session (half_made_session.h) with nothing recorded, removed.
  bool half_made_removed = false;
  // Its deferred seal was cut short (deferred_seal.h): before meta.json
  // (the session is recovered as above), or after it (seal_completed: only
  // the end checkpoint was left, and is written).
  bool seal_left = false;
  bool seal_completed = false;
};

// Recovers session `id` if it is orphaned; *recovered says whether it was.
Status RecoverSession(const StateDir& state, const std::string& id, bool* recovered, RecoveryReport* report);
// Recovers every orphaned session (of `root` only, unless it is empty);
// first mends every half-made session, whatever its root
// (half_made_session.h).
Status RecoverOrphans(const StateDir& state, const std::string& root, std::vector<RecoveryReport>* reports);
// sessions/<id>/sealed (docs/format.md): made by RecoverOrphans once the
// session's meta.json says it ended and no seal of it is under way; a
// session with it is passed over without its meta.json being read.
inline constexpr const char* kSealedMark = "sealed";

// Called after RecoverOrphans completed a session (recovered it, or finished
// a deferred seal cut short after meta.json), with its id: main sets
// it to write the session's last checkpoint (supervisor/git/ lies above
// this layer). Set once, before any command runs; null: nothing.
using RecoveredHook = void (*)(const std::string& id);
void SetRecoveredHook(RecoveredHook hook);

// One line per recovered session (and one per journal damage) on stderr.
void PrintRecoveryReport(const RecoveryReport& r);
// Whether this process runs inside a guard session (GUARD_SESSION is set):
// the outer guard then owns the state directory.
bool InsideGuardSession();
// Recovers the orphaned sessions of `root` before another command reads
// them, printing one line per recovered session unless `quiet`. Does
// nothing inside a guard session. With `wait_for_seals`, first waits for
// the deferred seals under way in `root` (deferred_seal.h): a command that
// reads sessions never sees one half sealed.
void RecoverBeforeCommand(const std::string& root, bool quiet, bool wait_for_seals = true);

}  // namespace guard
