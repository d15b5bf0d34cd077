// `guard undo` records its own session without a tracer
// (supervisor/restore/restore_session.h). That session must be exactly as
// undoable as a traced one: undoing it gives back the tree as before the
// undo, byte for byte, after a complete undo and after one killed at any of
// its changes (SIGKILL just before a change, its records written, or just
// after it, its outcome not yet written: GUARD_TEST_KILL_RESTORE,
// supervisor/restore/restore_kill_point.h) and recovered by `guard recover`.
#define BOOST_TEST_MODULE restore_kill
#include <signal.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Diff(const TreeSnapshot& expected, const TreeSnapshot& actual) {
  std::string text;
  for (const std::string& d : DiffSnapshots(expected, actual)) text += "    " + d + "\n";
  return text;
}

// A session whose undo makes every kind of change a restore makes: files
// written back (a removed tree, files rewritten: renamed over their
// session's versions, which it adopts), files, a symlink and a directory
// removed, a mode set on a file and on a directory, a FIFO made again.
struct UndoneByKill {
  Workspace ws;
  TreeSnapshot before, after;
  std::string session;

  UndoneByKill() {
    ws.Mkdir("gone");
    for (int i = 0; i < 30; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "gone/sub%d/f%02d", i % 3, i);
      if (i < 3) ws.Mkdir("gone/sub" + std::to_string(i));
      ws.Write(name, std::string("removed by the session: ") + name + "\n", i % 2 ? 0644 : 0755);
    }
    ws.Mkdir("kept");
    for (int i = 0; i < 10; ++i) ws.Write("kept/m" + std::to_string(i), "version one of m" + std::to_string(i) + "\n");
    ws.Write("mode", "its mode changes\n", 0644);
    ws.Mkdir("closed", 0755);
    BOOST_REQUIRE(mkfifo(ws.Path("pipe").c_str(), 0640) == 0);
    before = SnapshotTree(ws.tree());
    GuardResult run = RunGuardBash(ws,
                                   "rm -rf gone pipe && for f in kept/m*; do echo two >> $f; done && "
                                   "mkdir -p made/deep && echo new > made/deep/n && echo new2 > made/n2 && "
                                   "ln -s kept/m0 link && chmod 600 mode && chmod 700 closed");
    BOOST_REQUIRE_MESSAGE(run.exit_code == 0 && run.new_sessions.size() == 1, DescribeResult(run));
    session = run.new_sessions[0];
    after = SnapshotTree(ws.tree());
  }

  // `guard ARGS` (exit 0); its new session's id, "" if it made none.
  std::string Run(const std::vector<std::string>& args) const {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
    return r.new_sessions.size() == 1 ? r.new_sessions[0] : "";
  }
};

BOOST_AUTO_TEST_CASE(UndoOfTheUndoGivesBackTheTreeAsTheSessionLeftIt) {
  UndoneByKill s;
  std::string undo = s.Run({"undo", "--yes", "--session", s.session});
  BOOST_REQUIRE_MESSAGE(!undo.empty(), "the undo recorded no session");
  BOOST_TEST(Diff(s.before, SnapshotTree(s.ws.tree())).empty(), "undo:\n" << Diff(s.before, SnapshotTree(s.ws.tree())));
  SessionView view = SessionView::Load(s.ws.home(), undo);
  BOOST_TEST((view.meta().state == SessionState::kFinished));
  BOOST_TEST(view.meta().argv.size() >= 2);
  BOOST_TEST((view.meta().argv.size() >= 2 && view.meta().argv[1] == "__restore"));
  BOOST_TEST(view.journal_problems().empty());
  // Every change the undo made is an operation of its session, with its outcome.
  BOOST_TEST(view.Operations().size() > 40u);
  for (const Record* op : view.Operations()) BOOST_TEST(view.OutcomeOf(op->seq) != nullptr, "op " << op->seq);

  std::string redo = s.Run({"undo", "--yes", "--session", undo});
  BOOST_TEST(!redo.empty());
  std::string diff = Diff(s.after, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "undo of the undo:\n" << diff);
  // And once more: the undo of the undo of the undo is the first undo.
  s.Run({"undo", "--yes", "--session", redo});
  diff = Diff(s.before, SnapshotTree(s.ws.tree()));
  BOOST_TEST(diff.empty(), "undo of the redo:\n" << diff);
}

BOOST_AUTO_TEST_CASE(AnUndoKilledAtAnyChangeIsRecoveredAndItsUndoGivesBackTheTreeBeforeIt) {
  UndoneByKill s;
  // How many changes a whole undo makes: the operations of its session.
  std::string full = s.Run({"undo", "--yes", "--session", s.session});
  BOOST_REQUIRE(!full.empty());
  const size_t changes = SessionView::Load(s.ws.home(), full).Operations().size();
  BOOST_REQUIRE(changes > 40u);
  s.Run({"undo", "--yes", "--session", full});
  BOOST_REQUIRE_MESSAGE(Diff(s.after, SnapshotTree(s.ws.tree())).empty(), "the undo of the first undo differs");

  // The first and last changes, both ways, and random ones between.
  std::vector<std::string> points = {"before:1", "after:1", "before:" + std::to_string(changes),
                                     "after:" + std::to_string(changes)};
  Rng rng(12);
  for (int i = 0; i < 8; ++i) {
    points.push_back(std::string(rng.Percent(50) ? "before:" : "after:") + std::to_string(1 + rng.Below(changes)));
  }
  for (const std::string& point : points) {
    BOOST_TEST_CONTEXT("GUARD_TEST_KILL_RESTORE=" << point) {
      setenv("GUARD_TEST_KILL_RESTORE", point.c_str(), 1);
      GuardResult killed = RunGuardCommand(s.ws, {"undo", "--yes", "--session", s.session});
      unsetenv("GUARD_TEST_KILL_RESTORE");
      BOOST_REQUIRE_MESSAGE(killed.exit_code == 128 + SIGKILL, DescribeResult(killed));
      BOOST_REQUIRE_MESSAGE(killed.new_sessions.size() == 1, DescribeResult(killed));
      const std::string restore = killed.new_sessions[0];
      BOOST_TEST((SessionView::Load(s.ws.home(), restore).meta().state == SessionState::kRunning));

      GuardResult recover = RunGuardCommand(s.ws, {"recover"});
      BOOST_REQUIRE_MESSAGE(recover.exit_code == 0, DescribeResult(recover));
      BOOST_TEST((SessionView::Load(s.ws.home(), restore).meta().state == SessionState::kRecovered));

      GuardResult back = RunGuardCommand(s.ws, {"undo", "--yes", "--session", restore});
      BOOST_TEST(back.exit_code == 0, DescribeResult(back));
      std::string diff = Diff(s.after, SnapshotTree(s.ws.tree()));
      BOOST_REQUIRE_MESSAGE(diff.empty(), "undo of the killed undo " << restore << ":\n"
                                                                      << diff << DescribeResult(back));
    }
  }
}

}  // namespace
}  // namespace guard::e2e
