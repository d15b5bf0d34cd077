// One series of random kills: SIGKILL the agent (GUARD_KILL_TARGET kAgent) or
// guard itself (kGuard) at random moments of a random workload of the kind
// GUARD_KILL_MIX names (workloads.h), 25 seeds from GUARD_KILL_FIRST_SEED.
// tests/CMakeLists.txt builds this file once per target and mix, as
// e2e_durability_{agent,guard}_kill_{files,links,directories,everything}_test,
// and once more as e2e_durability_sealer_kill_everything_test: guard's own
// process killed during the deferred seal, after guard returned the
// workload's status (kSealer; the next command completes the seal).
//
// After an agent kill guard must exit 137 and seal the session as "killed";
// after a guard kill no process of the agent may survive, meta.json keeps
// saying "running", and the next command (`guard recover`, or `guard
// sessions`: seeded) completes the session as "recovered" and says how long
// that took. Either way, undo must then give back the tree as it was before
// the session, byte for byte, and replay the tree as the kill left it, both
// exiting 0. One property per test case, all on the same kills; see
// tests/e2e/support/kill_scenario.h for the moments, the checks and the
// control runs that tell a kill's damage from a restore bug.
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/kill_scenario.h"

#if !defined(GUARD_KILL_TARGET) || !defined(GUARD_KILL_MIX) || !defined(GUARD_KILL_FIRST_SEED)
#error "tests/CMakeLists.txt defines GUARD_KILL_TARGET, GUARD_KILL_MIX and GUARD_KILL_FIRST_SEED"
#endif

namespace guard::e2e {
namespace {

const KillSeries& Series() {
  return RunKillSeries(KillTarget::GUARD_KILL_TARGET, WorkloadMix::GUARD_KILL_MIX,
                       /*first_seed=*/GUARD_KILL_FIRST_SEED, /*count=*/25);
}

BOOST_AUTO_TEST_CASE(TheSessionEndsAsTheKillRequires) {
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

BOOST_AUTO_TEST_CASE(UndoAndReplayAreExactAndCleanEvenWhereRunsWithoutAKillFallShort) {
  ExpectRestoresExactEvenWithoutKills(Series());
}

}  // namespace
}  // namespace guard::e2e
