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
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

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

      // Finished, it is no longer shown as interrupted: named with the
      // restore that finished it.
      BOOST_REQUIRE_EQUAL(again.new_sessions.size(), 1u);
      GuardResult listed = s.Guard({"sessions"});
      BOOST_TEST(listed.out.find("(interrupted)") == std::string::npos, DescribeResult(listed));
      BOOST_TEST(listed.out.find("undo of " + s.id + ", finished by " + again.new_sessions[0]) != std::string::npos,
                 DescribeResult(listed));
      nlohmann::json finished = SessionJson(s, cut.new_sessions[0]);
      BOOST_TEST(finished["restore"]["finished_by"] == again.new_sessions[0], finished.dump());

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

// Ctrl-C before the restore's own session has started (here at the pause
// after the plan, where a prompt would be answered): one line, exit 130,
// nothing changed and nothing recorded; the same command then runs whole.
BOOST_AUTO_TEST_CASE(CtrlCBeforeTheRestoreStartsCancelsItCleanly) {
  RestoredSession s;
  StoppedRestore cut = RunStoppedRestore(s, {"undo", "--yes"}, 0, RestoreStop::kSigint);
  BOOST_REQUIRE_MESSAGE(cut.paused, DescribeResult(cut.result));
  BOOST_TEST(cut.result.exit_code == 130, DescribeResult(cut.result));
  BOOST_TEST(cut.result.err == "guard: undo cancelled by Ctrl-C before it changed anything\n", DescribeResult(cut.result));
  BOOST_TEST(cut.new_sessions.empty());
  std::string diff = TreeDiff(s.after, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "the cancelled undo changed the tree:\n" << diff);
  GuardResult status = s.Guard({"status"});
  BOOST_TEST(status.out.find("needs recovery") == std::string::npos, DescribeResult(status));
  GuardResult undo = s.Guard({"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(undo.err.find("finishing") == std::string::npos, DescribeResult(undo));
  diff = TreeDiff(s.before, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "undo after the cancelled one:\n" << diff << DescribeResult(undo));
}

// A power loss within the durability window after a whole undo: the
// undo's seal and the end of its log never reached the disk (its meta.json
// says running, its journal is cut short, mid-record), some of its renames
// were lost (files it put back hold what the session left, files it made
// are gone), one file it renamed into place lost its content (empty) and
// one it wrote in place is short.
// The same command typed again checks by content, not by the log, and
// leaves the tree exactly as the undo would have.
BOOST_AUTO_TEST_CASE(UndoCutShortByAPowerLossIsFinishedByUndoAgain) {
  RestoredSession s;
  GuardResult undo = s.Guard({"undo", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0 && undo.new_sessions.size() == 1, DescribeResult(undo));
  BOOST_REQUIRE(TreeDiff(s.before, SnapshotTree(s.ws.tree())).empty());
  const std::string dir = s.ws.home() + "/sessions/" + undo.new_sessions[0];

  // The log behind the tree: a third of it, ending inside a record.
  struct stat st;
  BOOST_REQUIRE(stat((dir + "/journal").c_str(), &st) == 0);
  BOOST_REQUIRE(truncate((dir + "/journal").c_str(), st.st_size / 3 + 5) == 0);
  // The seal lost: running, its supervisor gone.
  std::ifstream in(dir + "/meta.json");
  nlohmann::json meta = nlohmann::json::parse(in);
  in.close();
  meta["state"] = "running";
  meta["ended"] = nullptr;
  meta["ended_ns"] = 0;
  meta["exit_code"] = -1;
  meta["supervisor"]["pid"] = 0;
  std::ofstream(dir + "/meta.json") << meta.dump();

  // The tree as the disk kept it: renames over kept/m0..m4 lost (they hold
  // what the session left), d/s1's files never made, and d/s2/f002 renamed
  // into place with its content lost.
  for (int i = 0; i < 5; ++i) {
    s.ws.Write("kept/m" + std::to_string(i), "version one of m" + std::to_string(i) + "\ntwo\n");
  }
  for (int i = 1; i < 300; i += 4) {
    char name[32];
    std::snprintf(name, sizeof name, "d/s1/f%03d", i);
    BOOST_REQUIRE(unlink((s.ws.tree() + "/" + name).c_str()) == 0);
  }
  BOOST_REQUIRE(truncate((s.ws.tree() + "/d/s2/f002").c_str(), 0) == 0);
  // And d/s3/f003, which the undo wrote in place (its name was absent: no
  // staged name, no rename), cut short mid-write.
  BOOST_REQUIRE(truncate((s.ws.tree() + "/d/s3/f003").c_str(), 10) == 0);
  BOOST_REQUIRE(!TreeDiff(s.before, SnapshotTree(s.ws.tree())).empty());

  GuardResult again = s.Guard({"undo", "--yes"});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(again.err.find("finishing the interrupted undo " + undo.new_sessions[0]) != std::string::npos,
             DescribeResult(again));
  BOOST_TEST(again.out.find("conflict") == std::string::npos, DescribeResult(again));
  BOOST_TEST(again.err.find("d/s2/f002: neither as before nor as restored") != std::string::npos, DescribeResult(again));
  BOOST_TEST(again.err.find("d/s3/f003: neither as before nor as restored") != std::string::npos, DescribeResult(again));
  std::string diff = TreeDiff(s.before, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "after undo again:\n" << diff << DescribeResult(again));
  // And the chain is whole again: replay brings the work back.
  GuardResult replay = s.Guard({"replay", "--yes"});
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  diff = TreeDiff(s.after, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "replay after:\n" << diff << DescribeResult(replay));
}

}  // namespace
}  // namespace guard::e2e
