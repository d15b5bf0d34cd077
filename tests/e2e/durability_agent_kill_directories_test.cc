// SIGKILL the agent at a random moment of a random workload of structure changes (mkdir, rmdir, rm
// -rf, directory moves, file <-> directory): guard must exit 137 and seal the session as "killed",
// no process of it may survive, and undo must give back the tree as it was before, byte for byte,
// and replay the tree as the kill left it. One property per test case, all on the same kills; see
// tests/e2e/support/kill_scenario.h for the moments, the checks and the control runs that tell a
// kill's damage from a restore bug.
#define BOOST_TEST_MODULE durability_agent_kill_directories
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/kill_scenario.h"

namespace guard::e2e {
namespace {

// Guard bugs that keep test cases below disabled, or that they excuse:
// (A) When the agent dies inside a mutating call, the operation has no outcome record and guard
// seals the session without the final state of the paths it named: replay cannot rebuild a path
// such a call created ("the journal does not say what it held then", exit 1), and undo and replay
// name such paths as not restored. durability_kill_inside_call_test reproduces it alone.
// (B) undo and replay of sessions that move directories or exchange paths fall short with no kill
// at all: the control runs show it, and GUARD_DURABILITY_NO_KILL=1 reproduces it for the same
// seeds.
// (G) undo and replay take a rename the kill interrupted as done (see kKnownBugInterruptedRename
// in tests/e2e/support/kill_scenario.h): the enabled checks report such kills as messages instead
// of failing them.

const KillSeries& Series() {
  return RunKillSeries(KillTarget::kAgent, WorkloadMix::kDirectories, /*first_seed=*/2000, /*count=*/25);
}

BOOST_AUTO_TEST_CASE(GuardExitsWith137AndSealsTheSessionAsKilled) {
  ExpectKillCheck(Series(), KillCheck::kSessionEnd);
}

BOOST_AUTO_TEST_CASE(UndoGivesBackTheTreeAsBeforeTheSession) {
  ExpectKillCheck(Series(), KillCheck::kUndoExact);
}

// Disabled until guard bug (A) is fixed.
BOOST_AUTO_TEST_CASE(ReplayGivesBackTheTreeAsTheKillLeftIt, *boost::unit_test::disabled()) {
  ExpectKillCheck(Series(), KillCheck::kReplayExact);
}

// Disabled until guard bug (A) is fixed.
BOOST_AUTO_TEST_CASE(UndoAndReplayExitCleanly, *boost::unit_test::disabled()) {
  ExpectKillCheck(Series(), KillCheck::kRestoreClean);
}

// Disabled until guard bugs (A), (B) and (G) are fixed.
BOOST_AUTO_TEST_CASE(UndoAndReplayAreExactAndCleanEvenWhereRunsWithoutAKillFallShort, *boost::unit_test::disabled()) {
  ExpectRestoresExactEvenWithoutKills(Series());
}

}  // namespace
}  // namespace guard::e2e
