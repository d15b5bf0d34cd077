// Kill scenarios: a seeded random workload (random_workload.h) runs under
// guard on a temporary tree, and at a seeded moment either the agent (its
// main process, or every process of it at once, as the OOM killer or a
// closing terminal would) or guard itself is killed with SIGKILL. Then:
//
//   agent killed: guard exits 137 and seals the session as "killed";
//   guard killed: no process of the session survives (PTRACE_O_EXITKILL),
//                 meta.json still says "running", and the next command,
//                 `guard recover` or `guard sessions` (seeded), completes
//                 the session ("recovered") and says how long that took;
//   sealer killed: the workload runs to its end and guard exits 0; its own
//                 process, sealing the session after that (the deferred
//                 seal, supervisor/session/deferred_seal.h), is killed a
//                 seeded delay into the seal (paused first by
//                 GUARD_TEST_PAUSE_SEAL, so that the delay counts from the
//                 seal's start), and the next command completes the seal:
//                 "recovered" when meta.json still said running, else
//                 "finished" (only the end checkpoint was left);
//
// and in both cases, with the tree as the kill left it (the "stopped"
// snapshot, taken once everything has stopped and before any recovery):
// `guard undo --yes --session ID` gives back the tree as it was before the
// session, byte for byte, and `guard replay --yes --session ID` the stopped
// tree, both exiting 0.
//
// The moment: the workload marks the start of each step in a file outside
// the root; the test waits for step K (seeded) to begin, then sleeps a
// seeded delay and kills, so kills land inside steps of every kind, in
// process start-up, in the middle of a capture, or between two steps.
//
// Reverted after the kill (guard kills of one seed in four): the workload
// pauses before a seeded step until guard has saved, durably, everything
// the steps before it wrote, and two seconds have passed; the kill comes
// during or after the later steps. Then, before anything recovers the
// session, the tree is put back as it was before the session (every file
// written anew), and the session is recovered and replayed: every path no
// later step touched must come back exactly as the kill left it, and every
// other path in one of the states it had during the session (as the tree
// was before it or at the kill, or as any record of the journal has it).
// (Undo is checked on the other kills: after a revert, a file the later
// steps renamed before guard saved it has its content only where the
// revert put it back.)
//
// Telling a kill's damage from a restore bug: when undo or replay falls
// short after a kill, the same seed's workload is run again without any
// kill, cut after the step the kill interrupted (and after the one before
// it), and restored the same way. A shortfall the control runs show too
// is a restore bug that has nothing to do with the kill; one they do not
// show is work the kill lost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/e2e/support/random_workload.h"

namespace guard::e2e {

enum class KillTarget {
  kAgent,  // the command guard runs (its main process, or all of its processes)
  kGuard,  // guard itself
  // Nothing: the workload runs to its end (the control runs).
  kNone,
  // guard's process during the deferred seal, after guard returned.
  kSealer,
};

// Everything a seed decides about one scenario.
struct KillPlan {
  uint64_t seed = 0;
  WorkloadMix mix = WorkloadMix::kEverything;
  KillTarget target = KillTarget::kAgent;
  size_t kill_step = 0;      // kill once this step has begun ...
  int delay_us = 0;          // ... and this long has passed
  bool whole_agent = false;  // kAgent: every process of the agent, not only its main one
  // kGuard: the session is recovered by `guard sessions --json` (every
  // command recovers its root's sessions first) instead of `guard recover`.
  bool recover_by_listing = false;
  size_t max_steps = SIZE_MAX;  // kNone: run only the first max_steps steps
  // kGuard: revert the tree to its state before the session after the kill,
  // then recover and replay (see above); the workload pauses before step
  // `pause_before_step` until guard has saved what the steps before wrote.
  bool revert = false;
  size_t pause_before_step = 0;
};
// The plan for a workload of `steps` steps.
KillPlan MakeKillPlan(KillTarget target, uint64_t seed, WorkloadMix mix, size_t steps);
std::string DescribePlan(const KillPlan& plan);

// What undo and replay did with a session.
struct RestoreChecks {
  bool undo_exact = false;    // the tree came back as before the session
  bool replay_exact = false;  // ... and then as the session (or the kill) left it; after a
                              // revert: every path the later steps left alone exactly, the
                              // others in a state they had
  bool undo_clean = false;    // undo exited 0
  bool replay_clean = false;  // replay exited 0
  bool all() const { return undo_exact && replay_exact && undo_clean && replay_clean; }
  // Whether every check that fails here fails in `control` too.
  bool ExplainedBy(const RestoreChecks& control) const;
  std::string Failed() const;  // "undo inexact, replay exit != 0", or ""
};

struct KillOutcome {
  KillPlan plan;
  std::string session_id;
  // The step the workload had begun when the kill came ("done": all of them,
  // the agent was idle), read back after the kill.
  std::string reached;
  int guard_exit = -1;           // as a shell reports it (128+N for signal N)
  double recovery_seconds = -1;  // kGuard: the "(X s)" guard recover printed
  uint64_t torn_bytes = 0;       // kGuard: torn journal bytes recovery dropped
  size_t changed_paths = 0;      // paths whose stopped state differs from the before state
  // Operations under the root left without an outcome (the kill came inside
  // the call), "rename a -> b" and so on, and whether one is a rename or an
  // exchange (the calls whose outcome matters most to a restore).
  std::vector<std::string> interrupted;
  bool interrupted_rename = false;
  RestoreChecks restore;
  // Reverted kills: paths the steps before the pause changed and no later
  // step touched (they must come back exactly), and the others.
  size_t old_paths = 0, recent_paths = 0;
  // The kill itself and the session's end: exit code, survivors, meta.json,
  // recovery, the state `guard sessions` reports. Empty when all were right.
  std::vector<std::string> durability_failures;
  // What undo and replay got wrong, with their output.
  std::vector<std::string> restore_failures;
  std::string context;  // the plan, the steps, the agent's output
};

// Runs the scenario: `seed`'s workload and kill plan in a fresh workspace.
// Never throws: setup failures are durability_failures. `max_steps` cuts
// the workload (control runs).
KillOutcome RunKillScenario(KillTarget target, uint64_t seed, WorkloadMix mix, size_t max_steps = SIZE_MAX);

// A scenario and, when its undo or replay fell short, its control runs.
struct ClassifiedKill {
  KillOutcome outcome;
  std::vector<KillOutcome> controls;
  // Whether check `check` (a RestoreChecks member) passed, or fails in a
  // control run too, which then has nothing to do with the kill.
  bool Explained(bool RestoreChecks::*check) const;
  // undo or replay fell short after the kill where no control run does.
  bool LostByKill() const;
  bool Inexact() const;  // ... and the tree was wrong, not only the exit code
  // undo/replay fell short, and no more than a control run does.
  bool RestoreBug() const { return !outcome.restore.all() && !LostByKill(); }
};

struct KillSeries {
  KillTarget target = KillTarget::kAgent;
  WorkloadMix mix = WorkloadMix::kEverything;
  std::vector<ClassifiedKill> kills;
  std::string Summary() const;  // one line of totals
};

// Runs `count` scenarios with seeds first_seed, first_seed+1, ... (plus the
// value of GUARD_DURABILITY_SEED, when set, so that a run can explore other
// seeds; GUARD_DURABILITY_KILLS, when set, replaces `count`), once per
// process: a second call with the same arguments returns the same series,
// so that each test case of a file checks one property of the same kills.
// GUARD_DURABILITY_NO_KILL=1 runs the same seeds without killing anything.
const KillSeries& RunKillSeries(KillTarget target, WorkloadMix mix, uint64_t first_seed, int count);

// What a kill test checks, one property per test case, as Boost.Test
// checks on every kill of the series (the series' totals follow, once, as
// BOOST_TEST_MESSAGE and on stdout):
enum class KillCheck {
  // The kill and the session's end: guard's exit (137 for an agent kill),
  // no surviving process, meta.json "running" after a guard kill and
  // `guard recover` completing it, the state `guard sessions` reports.
  kSessionEnd,
  kUndoExact,     // undo gave back the tree before the session
  kReplayExact,   // replay gave back the tree as the kill left it
  kRestoreClean,  // undo and replay exited 0 (named no path they could not restore)
};
// Failures a control run without a kill shows as well are not the kill's
// and are not counted here; ExpectRestoresExactEvenWithoutKills counts them
// all.
void ExpectKillCheck(const KillSeries& series, KillCheck check);
// undo and replay exact and clean after every kill, with no excuse.
void ExpectRestoresExactEvenWithoutKills(const KillSeries& series);

}  // namespace guard::e2e
