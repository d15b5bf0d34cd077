// An interrupted restore is finished by the same command typed again
// (docs/restore.md, "An interrupted restore"): Ctrl-C (SIGINT), SIGTERM or
// SIGKILL in the middle of `guard undo` or `guard replay` of a few hundred
// files, stopped at a chosen change (GUARD_TEST_PAUSE_RESTORE_AT,
// supervisor/restore/restore_kill_point.h), then the same command again:
// the tree is byte for byte what one uninterrupted restore gives. Before,
// Ctrl-C left the tree half undone and a plain `guard undo` then reversed
// the partial undo. The kill series over many restores is
// restore_finish_series_test.cc.
#define BOOST_TEST_MODULE restore_finish
#include <signal.h>

#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/stopped_restore.h"

namespace guard::e2e {
namespace {

nlohmann::json SessionJson(const RestoredSession& s, const std::string& id) {
  GuardResult listed = s.Guard({"sessions", "--json"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, DescribeResult(listed));
  for (const nlohmann::json& j : nlohmann::json::parse(listed.out)) {
    if (j.value("id", "") == id) return j;
  }
  return nullptr;
}

// Ctrl-C at a change while files are staged, and at one while they are
// renamed into place: the undo says how far it went, exits 130, records
// itself as an interrupted undo of the session, and `guard undo` again
// finishes it; `guard replay` then brings the work back.
BOOST_AUTO_TEST_CASE(CtrlCMidUndoThenUndoAgainFinishesIt) {
  RestoredSession s;
  const size_t changes = s.UndoChanges();
  BOOST_REQUIRE(changes > 300u);
  for (long at : {static_cast<long>(changes / 4), static_cast<long>(changes * 3 / 4)}) {
    BOOST_TEST_CONTEXT("interrupted at change " << at << " of " << changes) {
      StoppedRestore cut = RunStoppedRestore(s, {"undo", "--yes"}, at, RestoreStop::kSigint);
      BOOST_REQUIRE_MESSAGE(cut.paused, DescribeResult(cut.result));
      BOOST_TEST(cut.result.exit_code == 130, DescribeResult(cut.result));
      BOOST_TEST(cut.result.err.find("guard: interrupted: ") != std::string::npos, DescribeResult(cut.result));
      BOOST_TEST(cut.result.err.find("paths restored; `guard undo` again finishes it") != std::string::npos,
                 DescribeResult(cut.result));
      BOOST_REQUIRE_EQUAL(cut.new_sessions.size(), 1u);
      BOOST_TEST(!TreeDiff(s.before, SnapshotTree(s.ws.tree())).empty(), "the interrupted undo did everything");
      nlohmann::json j = SessionJson(s, cut.new_sessions[0]);
      BOOST_TEST(j["state"] == "killed", j.dump());
      BOOST_TEST(j["restore"]["of"] == s.id, j.dump());
      BOOST_TEST(j["restore"]["interrupted"] == true, j.dump());
      GuardResult status = s.Guard({"status"});
      BOOST_TEST(status.out.find("stopped mid-session") == std::string::npos, DescribeResult(status));

      GuardResult again = s.Guard({"undo", "--yes"});
      BOOST_TEST(again.exit_code == 0, DescribeResult(again));
      BOOST_TEST(again.err.find("finishing the interrupted undo " + cut.new_sessions[0]) != std::string::npos,
                 DescribeResult(again));
      BOOST_TEST(again.out.find("conflict") == std::string::npos, DescribeResult(again));
      std::string diff = TreeDiff(s.before, SnapshotTree(s.ws.tree()));
      BOOST_REQUIRE_MESSAGE(diff.empty(), "after undo again:\n" << diff << DescribeResult(again));

      GuardResult replay = s.Guard({"replay", "--yes"});
      BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
      diff = TreeDiff(s.after, SnapshotTree(s.ws.tree()));
      BOOST_REQUIRE_MESSAGE(diff.empty(), "replay after the finished undo:\n" << diff << DescribeResult(replay));
    }
  }
}

// The same for replay (after an undo), stopped by SIGTERM, finished by
// `guard replay --session ID` typed again.
BOOST_AUTO_TEST_CASE(SigtermMidReplayThenReplayAgainFinishesIt) {
  RestoredSession s;
  s.UndoChanges();
  const size_t changes = s.replay_changes;
  GuardResult undo = s.Guard({"undo", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0 && TreeDiff(s.before, SnapshotTree(s.ws.tree())).empty(),
                        DescribeResult(undo));
  StoppedRestore cut =
      RunStoppedRestore(s, {"replay", "--yes", "--session", s.id}, static_cast<long>(changes / 2), RestoreStop::kSigterm);
  BOOST_REQUIRE_MESSAGE(cut.paused, DescribeResult(cut.result));
  BOOST_TEST(cut.result.exit_code == 128 + SIGTERM, DescribeResult(cut.result));
  BOOST_TEST(cut.result.err.find("`guard replay --session " + s.id + "` again finishes it") != std::string::npos,
             DescribeResult(cut.result));
  GuardResult again = s.Guard({"replay", "--yes", "--session", s.id});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  std::string diff = TreeDiff(s.after, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "after replay again:\n" << diff << DescribeResult(again));
}

// SIGKILL: no handler runs; the next command's recovery seals the undo as
// interrupted, and the same command finishes it.
BOOST_AUTO_TEST_CASE(SigkillMidUndoThenUndoAgainFinishesIt) {
  RestoredSession s;
  const size_t changes = s.UndoChanges();
  StoppedRestore cut = RunStoppedRestore(s, {"undo", "--yes"}, static_cast<long>(changes * 2 / 3), RestoreStop::kSigkill);
  BOOST_REQUIRE_MESSAGE(cut.paused, DescribeResult(cut.result));
  BOOST_TEST(cut.result.exit_code == 128 + SIGKILL, DescribeResult(cut.result));
  BOOST_REQUIRE_EQUAL(cut.new_sessions.size(), 1u);
  GuardResult again = s.Guard({"undo", "--yes"});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(again.err.find("finishing the interrupted undo " + cut.new_sessions[0]) != std::string::npos,
             DescribeResult(again));
  std::string diff = TreeDiff(s.before, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "after undo again:\n" << diff << DescribeResult(again));
  nlohmann::json j = SessionJson(s, cut.new_sessions[0]);
  BOOST_TEST(j["state"] == "recovered", j.dump());
  BOOST_TEST(j["restore"]["interrupted"] == true, j.dump());
}

}  // namespace
}  // namespace guard::e2e
