// The session guard runs on macOS (supervisor/commands/watch_launch.h: watch
// mode without a tracer, a shim or a front process; the command in a
// process group of its own), run here with inotify in place of FSEvents
// (GUARD_TEST_WATCH_LAUNCH=1). What the Mac gets above its source: capture,
// undo and replay byte for byte; the command holds the terminal while it
// runs (its process group is the foreground one); a mark over the mark
// channel that makes
// `undo --to` exact between two rewrites of a file; guard waits for what the
// command left running in its group; the command's status comes back.
// Unit twins: tests/unit/watch/watch_session_test.cc (the watcher),
// tests/unit/session/mark_channel_test.cc (the channel).
#define BOOST_TEST_MODULE watch_launch
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/pty_run.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

GuardRun MacSession(const std::string& script) {
  GuardRun run;
  run.command = {"bash", "-c", script};
  run.guard_options = {"--mode", "watch"};
  run.env["GUARD_TEST_WATCH_LAUNCH"] = "1";
  run.timeout_seconds = kTimeoutSeconds;
  return run;
}

BOOST_AUTO_TEST_CASE(ASessionIsCapturedUndoneAndReplayedByteForByte) {
  Workspace ws;
  ws.Mkdir("src");
  for (int i = 0; i < 10; ++i) ws.Write("src/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
  ws.Write("kept.txt", "before\n");
  ws.Write("moved.txt", "moves\n");
  ws.Write("mode.txt", "its mode changes\n");
  ws.Symlink("kept.txt", "link");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, MacSession("rm -rf src && echo after > kept.txt && mv moved.txt moved-to.txt && "
                                          "chmod 600 mode.txt && mkdir -p made/deep && echo new > made/deep/new.txt "
                                          "&& rm link && ln -s moved-to.txt link"));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  TreeSnapshot after = SnapshotTree(ws.tree());
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", r.new_sessions[0]}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  std::vector<std::string> diff = DiffSnapshots(after, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after replay: " << (diff.empty() ? "" : diff.front()));
}

// The file is rewritten at once after the mark: without the barrier the
// mark would land before the first write's record or after the second's.
BOOST_AUTO_TEST_CASE(AMarkBetweenTwoRewritesMakesUndoToItExact) {
  Workspace ws;
  ws.Write("f", "zero\n");
  const std::string g = Quoted(GuardBinary());
  GuardResult r = RunGuard(ws, MacSession("set -e; echo one > f; " + g + " mark between; echo two > f; echo x > y"));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  const std::string id = r.new_sessions.at(0);
  GuardResult undo = RunGuardWithin(ws, {"undo", "--session", id, "--to", "@1", "--yes"}, kTimeoutSeconds);
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ReadFile(ws.tree() + "/f") == "one\n");
  BOOST_TEST(!ws.Exists("y"));
}

// The command's first process ends at once; what it left in its process
// group writes later, and guard waits for it: the write is the session's.
BOOST_AUTO_TEST_CASE(GuardWaitsForWhatTheCommandLeftInItsGroup) {
  Workspace ws;
  const std::string go = ws.outside() + "/go";
  GuardResult r = RunGuard(ws, MacSession("(while [ ! -e " + Quoted(go) + " ]; do sleep 0.02; done; "
                                          "echo late > late) & touch " + Quoted(go) + "; exit 3"));
  BOOST_TEST(r.exit_code == 3, DescribeResult(r));
  BOOST_REQUIRE(ws.Exists("late"));
  UndoGivesBack(ws, r, TreeSnapshot{}, kTimeoutSeconds);
}

// On a terminal the command's group is the foreground one: its read from
// the terminal is not stopped by SIGTTIN (which would stop guard too, and
// the run would time out).
BOOST_AUTO_TEST_CASE(TheCommandReadsFromTheTerminal) {
  Workspace ws;
  GuardRun run = MacSession("read line && echo \"$line\" > got");
  run.quiet = true;
  ProcessSpec spec = GuardSpec(ws, run);
  spec.stdin_data = "typed\n";
  spec.timeout_seconds = 60;
  PtyResult r = RunOnPty(spec);
  BOOST_REQUIRE_MESSAGE(!r.timed_out && r.exit_code == 0, "exit " << r.exit_code << ": " << r.out);
  BOOST_TEST(ReadFile(ws.tree() + "/got") == "typed\n");
}

struct StatusCase {
  const char* script;
  int code;
};

BOOST_AUTO_TEST_CASE(TheCommandsStatusComesBack) {
  const std::vector<StatusCase> cases = {
      {"exit 0", 0}, {"exit 7", 7}, {"kill -TERM $$", 128 + 15}, {"kill -KILL $$", 128 + 9}};
  for (const StatusCase& c : cases) {
    BOOST_TEST_CONTEXT(c.script) {
      Workspace ws;
      GuardResult r = RunGuard(ws, MacSession(c.script));
      BOOST_TEST(r.exit_code == c.code, DescribeResult(r));
    }
  }
  Workspace ws;
  GuardRun missing = MacSession("");
  missing.command = {"no-such-program-anywhere"};
  GuardResult r = RunGuard(ws, missing);
  BOOST_TEST(r.exit_code == 127, DescribeResult(r));
  BOOST_TEST(r.new_sessions.empty());
  // Nothing can hide the state directory from this session's command.
  GuardRun hidden = MacSession("true");
  hidden.env["GUARD_HIDE_STATE"] = "required";
  GuardResult refused = RunGuard(ws, hidden);
  BOOST_TEST(refused.exit_code == 125, DescribeResult(refused));
  BOOST_TEST(refused.err.find("cannot hide the state directory") != std::string::npos, refused.err);
  BOOST_TEST(refused.new_sessions.empty());
}

}  // namespace
}  // namespace guard::e2e
