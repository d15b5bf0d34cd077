// The kill series over restores (issue 37): undo and replay of one session
// of 300 files, alternately, each stopped at a random change by SIGKILL,
// SIGINT or a closed stdout (tests/e2e/support/stopped_restore.h), then
// the same command typed again: the tree is exact every time, the undo's
// the tree before the session and the replay's the tree it left. The issue
// asks for 200 restores of a 3,000-file session: that is the ctest entry
// restore_finish_series_full_test (GUARD_SERIES_ROUNDS=200,
// GUARD_SERIES_FILES=3000, label slow). Run bare, 40 rounds of 300 files
// reach every phase of a restore (removals, staging, renames) with each
// stop in about a minute.
#define BOOST_TEST_MODULE restore_finish_series
#include <signal.h>

#include <cstdlib>

#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/stopped_restore.h"

namespace guard::e2e {
namespace {

// A positive count from the environment, else `fallback`.
int FromEnv(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  BOOST_REQUIRE_MESSAGE(*end == '\0' && n > 0 && n <= 100000, name << "=" << v << " is not a count");
  return static_cast<int>(n);
}

const char* Name(RestoreStop how) {
  switch (how) {
    case RestoreStop::kSigint: return "SIGINT";
    case RestoreStop::kSigterm: return "SIGTERM";
    case RestoreStop::kSigkill: return "SIGKILL";
    case RestoreStop::kClosedStdout: return "closed stdout";
  }
  return "?";
}

BOOST_AUTO_TEST_CASE(EachRestoreStoppedAnywhereIsFinishedByTheSameCommandAgain) {
  const int rounds = FromEnv("GUARD_SERIES_ROUNDS", 40);
  const int files = FromEnv("GUARD_SERIES_FILES", 300);
  BOOST_TEST_MESSAGE(rounds << " rounds over a session of " << files << " files");
  RestoredSession s(files);
  const size_t changes = s.UndoChanges();
  BOOST_REQUIRE(changes > static_cast<size_t>(files));
  Rng rng(37);
  const std::vector<RestoreStop> stops = {RestoreStop::kSigkill, RestoreStop::kSigint, RestoreStop::kClosedStdout};
  for (int round = 0; round < rounds; ++round) {
    const bool undo = round % 2 == 0;
    const std::string verb = undo ? "undo" : "replay";
    const TreeSnapshot& expected = undo ? s.before : s.after;
    const RestoreStop how = stops[static_cast<size_t>(round / 2) % stops.size()];
    const long at = 1 + static_cast<long>(rng.Below(undo ? changes : s.replay_changes));
    BOOST_TEST_CONTEXT("round " << round << ": " << verb << " stopped by " << Name(how) << " at change " << at) {
      StoppedRestore cut = RunStoppedRestore(s, {verb, "--yes"}, at, how);
      BOOST_REQUIRE_MESSAGE(cut.paused, DescribeResult(cut.result));
      int want = how == RestoreStop::kSigkill ? 128 + SIGKILL : how == RestoreStop::kSigint ? 130 : 0;
      // Stopped at its very last change, an interrupted restore has nothing
      // left to stop before: it finishes.
      BOOST_TEST((cut.result.exit_code == want || (how == RestoreStop::kSigint && cut.result.exit_code == 0)),
                 DescribeResult(cut.result));
      GuardResult again = s.Guard({verb, "--yes"});
      // A restore that had finished (a closed stdout stops nothing) leaves
      // nothing to do: an undo says it is undone already.
      bool done_already = again.exit_code == 1 && again.err.find("is already undone") != std::string::npos;
      BOOST_TEST((again.exit_code == 0 || done_already), DescribeResult(again));
      BOOST_TEST(again.out.find("conflict") == std::string::npos, DescribeResult(again));
      std::string diff = TreeDiff(expected, SnapshotTree(s.ws.tree()));
      BOOST_REQUIRE_MESSAGE(diff.empty(), "after " << verb << " again:\n" << diff << DescribeResult(again));
    }
  }
}

}  // namespace
}  // namespace guard::e2e
