// The session guard runs on macOS (supervisor/commands/watch_launch.h: watch
// mode without a tracer, a shim or a front process; the command in a
// process group of its own), run here with inotify in place of FSEvents
// (GUARD_TEST_WATCH_LAUNCH=1). What the Mac gets above its source: capture,
// undo and replay byte for byte; the command holds the terminal while it
// runs (its process group is the foreground one); a mark over the mark
// channel that makes
// `undo --to` exact between two rewrites of a file; guard waits for what the
// command left running in its group; the command's status comes back; in a
// git work tree the baseline keeps clean tracked files by their blob ids,
// pinned against a `git gc --prune=now` of the command's.
// Unit twins: tests/unit/watch/watch_session_test.cc (the watcher),
// tests/unit/session/mark_channel_test.cc (the channel).
#define BOOST_TEST_MODULE watch_launch
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
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

// The baseline reads no clean tracked file: it keeps each by its blob id,
// pinned by refs/guard-baseline/<id> while the session runs (the command's
// `git gc --prune=now` packs the loose objects and prunes nothing pinned),
// and the ref is gone at the end. The removed files come back from git's
// objects, byte for byte, the untracked file from the store, and the branch
// the gc packed stays (git_state_restore_test has the same without watch).
BOOST_AUTO_TEST_CASE(AGitWorkTreesCleanFilesAreKeptByBlobIdPinnedAgainstGc) {
  Workspace ws;
  BOOST_REQUIRE(Git(ws, {"init", "-q"}).exit_code == 0);
  ws.Mkdir("src");
  for (int i = 0; i < 20; ++i) ws.Write("src/f" + std::to_string(i), "tracked " + std::to_string(i) + "\n");
  GitOut(ws, {"add", "-A"});
  GitOut(ws, {"commit", "-q", "-m", "base"});
  const std::string head = TrimEnd(GitOut(ws, {"rev-parse", "HEAD"}));
  ws.Write("untracked.txt", "not in git\n");
  const TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string refs = ws.outside() + "/refs";
  GuardRun run = MacSession("set -e; git for-each-ref --format='%(refname)' refs/guard-baseline/ > " + Quoted(refs) +
                            "; git gc -q --prune=now; rm -rf src; echo changed > untracked.txt");
  for (const auto& [name, value] : GitTestEnv(ws)) run.env[name] = value;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  const std::string id = r.new_sessions.at(0);
  BOOST_TEST(ReadFile(refs) == "refs/guard-baseline/" + id + "\n");
  BOOST_TEST(TrimEnd(GitOut(ws, {"for-each-ref", "refs/guard-baseline/"})).empty(), "the pin outlived the session");
  const std::string log = ReadFile(ws.home() + "/sessions/" + id + "/guard.log");
  BOOST_TEST(log.find("by git object id") != std::string::npos, log);
  BOOST_TEST(log.find(", 20 files (") != std::string::npos, log);
  // The work tree byte for byte; .git the git way (its branch back, a
  // reflog line more: docs/restore.md, "git's own files").
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", id}, kTimeoutSeconds);
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  std::vector<std::string> diff = DiffSnapshots(before.Without(".git"), SnapshotTree(ws.tree()).Without(".git"));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()));
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", "HEAD"})) == head);
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "?? untracked.txt\n");
  CheckFsck(ws);
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
