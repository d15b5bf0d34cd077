// SIGKILL guard itself at a random moment of a random workload of every kind of change, evenly: no
// process of the agent may survive it, meta.json keeps saying "running", the next command (`guard
// recover`, or `guard sessions`: seeded) completes the session ("recovered", and says how long it
// took: the longest recovery is printed), and undo and replay then give back the tree as it was
// before and as the kill left it. One property per test case, all on the same kills; see
// tests/e2e/support/kill_scenario.h.
#define BOOST_TEST_MODULE durability_guard_kill_everything
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/kill_scenario.h"

namespace guard::e2e {
namespace {

// Guard bugs that keep test cases below disabled, or that they excuse:
// (B) undo and replay of sessions that move directories or exchange paths fall short with no kill
// at all: the control runs show it, and GUARD_DURABILITY_NO_KILL=1 reproduces it for the same
// seeds.
// (G) undo and replay take a rename the kill interrupted as done (see kKnownBugInterruptedRename
// in tests/e2e/support/kill_scenario.h): the enabled checks report such kills as messages instead
// of failing them.

const KillSeries& Series() {
  return RunKillSeries(KillTarget::kGuard, WorkloadMix::kEverything, /*first_seed=*/8000, /*count=*/25);
}

BOOST_AUTO_TEST_CASE(NoAgentProcessSurvivesAndRecoverCompletesTheSession) {
  ExpectKillCheck(Series(), KillCheck::kSessionEnd);
}

BOOST_AUTO_TEST_CASE(UndoGivesBackTheTreeAsBeforeTheSession) {
  ExpectKillCheck(Series(), KillCheck::kUndoExact);
}

BOOST_AUTO_TEST_CASE(ReplayGivesBackTheTreeAsTheKillLeftIt) {
  ExpectKillCheck(Series(), KillCheck::kReplayExact);
}

BOOST_AUTO_TEST_CASE(UndoAndReplayExitCleanly) {
  ExpectKillCheck(Series(), KillCheck::kRestoreClean);
}

// Disabled until guard bugs (B) and (G) are fixed.
BOOST_AUTO_TEST_CASE(UndoAndReplayAreExactAndCleanEvenWhereRunsWithoutAKillFallShort, *boost::unit_test::disabled()) {
  ExpectRestoresExactEvenWithoutKills(Series());
}

}  // namespace
}  // namespace guard::e2e
