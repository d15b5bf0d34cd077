// guard --mode watch: no tracer, no shim; the tree is watched and each
// change saved after it happened (docs/capture.md, "Watch mode"). What no
// other mode sees without a tracer is captured and undone byte for byte (a
// static busybox's rm -rf, a program that empties its environment); a burst
// past the kernel's event queue is caught up by a rescan with nothing
// missed; files made in a new directory before its watch exists are
// caught; a tree renamed into and out of the root is undone; replay gives
// the session's work back. A file rewritten with a mark between is undone
// to the mark exactly (the mark's barrier saves the first version). guard
// SIGKILLed: the agent stops, and what it changed after the watcher's last
// round is recorded by the next command's recovery (its catch-up), so that
// replay gives the work back after a `git checkout -- . && git clean -fd`.
// Unit twins: tests/unit/watch/watch_session_test.cc.
#define BOOST_TEST_MODULE watch_mode
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <fstream>
#include <map>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/guard_stats.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/tree_snapshot.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 180;

GuardRun Watch(const std::vector<std::string>& command) {
  GuardRun run;
  run.command = command;
  run.guard_options = {"--mode", "watch"};
  run.timeout_seconds = kTimeoutSeconds;
  return run;
}

// Undo gives `before` back, and replay then gives `after` back.
void UndoAndReplayGiveBack(const Workspace& ws, const GuardResult& r, const TreeSnapshot& before,
                           const TreeSnapshot& after) {
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", r.new_sessions[0]}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, replay.err);
  std::vector<std::string> diff = DiffSnapshots(after, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after replay: " << (diff.empty() ? "" : diff.front()));
}

BOOST_AUTO_TEST_CASE(AStaticRmRfAndAnEmptiedEnvironmentAreCapturedAndUndone) {
  Workspace ws;
  ws.Mkdir("src");
  ws.Mkdir("src/deep");
  for (int i = 0; i < 20; ++i) ws.Write("src/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
  ws.Write("src/deep/x", "deep\n", 0600);
  ws.Symlink("f1", "src/link");
  ws.Write("kept.txt", "before\n");
  ws.Write("moved.txt", "moves\n");
  ws.Write("mode.txt", "its mode changes\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run = Watch({"bash", "-c",
                        "grep -q '^TracerPid:[[:space:]]*0$' /proc/self/status && echo untraced > ../outside/traced; "
                        "/bin/busybox rm -rf src && "
                        "env -i /bin/busybox sh -c 'echo after > kept.txt && mv moved.txt moved-to.txt && "
                        "chmod 600 mode.txt && mkdir made && echo new > made/new.txt'"});
  const std::string stats = ws.outside() + "/stats";
  run.env["GUARD_STATS_FILE"] = stats;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ReadFile(ws.outside() + "/traced") == "untraced\n");
  std::map<std::string, long long> s = ReadGuardStats(stats);
  BOOST_TEST(s["seccomp_stops"] == 0);
  BOOST_TEST(s["shim_calls"] == 0);
  BOOST_TEST(s["watch_changes"] >= 28);
  BOOST_TEST(s["baseline_files"] == 24);
  TreeSnapshot after = SnapshotTree(ws.tree());
  BOOST_TEST(!ws.Exists("src"));
  UndoAndReplayGiveBack(ws, r, before, after);
}

// The watcher is held (a test pause point) while the command makes three
// events a file for more files than the kernel queues: the queue overflows,
// and the rescan that follows finds every file.
BOOST_AUTO_TEST_CASE(AQueueOverflowIsCaughtUpByTheRescanWithNothingMissed) {
  Workspace ws;
  ws.Mkdir("burst");
  ws.Write("burst/old", "old\n");
  unsigned long limit = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> limit;
  const unsigned long files = limit / 3 + 2000;
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string pause = ws.outside() + "/pause";
  GuardRun run = Watch({"python3", "-c",
                        "import os, sys\n"
                        "for i in range(int(sys.argv[1])):\n"
                        "    with open('burst/%d' % i, 'w') as f: f.write('content %d\\n' % i)\n"
                        "os.unlink('burst/old')\n"
                        "os.unlink(sys.argv[2])\n",
                        std::to_string(files), pause});
  const std::string stats = ws.outside() + "/stats";
  run.env["GUARD_STATS_FILE"] = stats;
  run.env["GUARD_TEST_PAUSE_WATCH"] = pause;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  std::map<std::string, long long> s = ReadGuardStats(stats);
  BOOST_TEST(s["watch_rescans"] >= 1, "the queue did not overflow: the test proves nothing");
  BOOST_TEST(s["files"] == static_cast<long long>(files) + 1);
  TreeSnapshot after = SnapshotTree(ws.tree());
  UndoAndReplayGiveBack(ws, r, before, after);
}

// Held again: the directories and their files are made before the watcher
// has read the first directory's creation, so before any watch on them;
// the rest after it resumed.
BOOST_AUTO_TEST_CASE(FilesMadeInANewDirectoryBeforeItsWatchExistsAreCaptured) {
  Workspace ws;
  ws.Write("seed", "seed\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string pause = ws.outside() + "/pause";
  GuardRun run = Watch({"bash", "-c",
                        "mkdir -p n/m/o && echo early > n/m/o/early && echo top > n/top && rm " + pause +
                            " && echo late > n/m/o/late && echo more >> n/top && mkdir n/m/p && echo p > n/m/p/f"});
  run.env["GUARD_TEST_PAUSE_WATCH"] = pause;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  TreeSnapshot after = SnapshotTree(ws.tree());
  UndoAndReplayGiveBack(ws, r, before, after);
}

BOOST_AUTO_TEST_CASE(ATreeRenamedIntoAndOutOfTheRootIsUndone) {
  Workspace ws;
  ws.Mkdir("leaving");
  ws.Mkdir("leaving/sub");
  ws.Write("leaving/sub/y", "leaves the root\n");
  ws.Write("leaving/z", "with it\n", 0640);
  MakeDir(ws.outside() + "/arriving");
  MakeDir(ws.outside() + "/arriving/sub");
  WriteFile(ws.outside() + "/arriving/sub/x", "enters the root\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuard(ws, Watch({"bash", "-c",
                                      "mv ../outside/arriving arrived && mv leaving ../outside/left && "
                                      "echo written after > arrived/sub/x && echo new > arrived/sub/new"}));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  TreeSnapshot after = SnapshotTree(ws.tree());
  UndoAndReplayGiveBack(ws, r, before, after);
}


// The watcher is held for the whole session (a test pause point): it never
// looks by itself, so the first version of the file can be saved only by
// the mark's barrier. The two writes are as close as the mark's round trip
// (the "within 10 ms"): without the barrier they would merge into
// one change, and the undo to the mark would give the original back.
BOOST_AUTO_TEST_CASE(AFileRewrittenWithAMarkBetweenIsUndoneToTheMarkExactly) {
  Workspace ws;
  ws.Write("f.txt", "original\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string pause = ws.outside() + "/pause";
  GuardRun run = Watch({"bash", "-c",
                        "echo first > f.txt && " + GuardBinary() + " mark between && echo second > f.txt && rm " +
                            pause});
  run.env["GUARD_TEST_PAUSE_WATCH"] = pause;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  BOOST_TEST(ws.Read("f.txt") == "second\n");
  GuardResult to_mark =
      RunGuardWithin(ws, {"undo", "--yes", "--session", r.new_sessions[0], "--to", "between"}, kTimeoutSeconds);
  BOOST_REQUIRE_MESSAGE(to_mark.exit_code == 0, DescribeResult(to_mark));
  BOOST_TEST(ws.Read("f.txt") == "first\n");
  UndoGivesBack(ws, r, before, kTimeoutSeconds);
}

// guard SIGKILLed in a watch session whose watcher is held (a test pause
// point): what the agent did before its `guard mark` is saved (the mark's
// barrier), what it did after is in the tree alone. Returns the session,
// with the tree as the kill left it and as it was at the mark (copied by
// the agent beside the tree), once the keeper has stopped every process of
// the session and stamped its heartbeat, and the clock has passed that
// stamp: what the test changes from here on is later than the session.
struct WatchKill {
  std::string id;
  TreeSnapshot before, at_mark, at_kill;
};

void InGit(const Workspace& ws, const std::string& script) { RunInTree(ws, script); }

WatchKill KillGuardInAWatchSession(const Workspace& ws) {
  WatchKill k;
  InGit(ws, "git init -q . && mkdir src && echo tracked > src/a.c && echo gone > src/b.c && echo readme > README && "
            "git add -A && git commit -qm start");
  k.before = SnapshotTree(ws.tree()).Without(".git");
  const std::string o = ws.outside() + "/";
  const std::string script =
      // Saved by the mark's barrier.
      "echo 'first work' > src/a.c && rm src/b.c && mkdir -p lib/deep && echo new > lib/deep/n.c && "
      "ln -s ../README lib/readme && chmod 600 README && " +
      GuardBinary() + " mark saved && cp -a . " + o + "at_mark && rm -rf " + o + "at_mark/.git && " +
      // After the mark: the watcher never looks again; only the catch-up sees it.
      "echo 'second work' > src/a.c && echo later > lib/deep/later.c && rm lib/readme && mkdir tmp && "
      "echo t > tmp/t && echo more >> README && "
      "echo $$ > " + o + "agent && (sleep 1000 & echo $! > " + o + "job; wait) & "
      "while [ ! -s " + o + "job ]; do sleep 0.01; done; echo $PPID > " + o + "ready.tmp && mv " + o + "ready.tmp " +
      o + "ready; wait";
  GuardRun run = Watch({"bash", "-c", script});
  run.env = GitTestEnv(ws);
  run.env["GUARD_TEST_PAUSE_WATCH"] = o + "pause";
  ChildProcess guard(GuardSpec(ws, run));
  for (int i = 0; i < 2400 && !PathExists(o + "ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_REQUIRE_MESSAGE(PathExists(o + "ready"), "the session's command did not get ready");
  BOOST_REQUIRE_EQUAL(ws.SessionIds().size(), 1u);
  k.id = ws.SessionIds()[0];
  const pid_t supervisor = static_cast<pid_t>(std::stol(ReadFile(o + "ready")));
  const std::vector<pid_t> agent = {static_cast<pid_t>(std::stol(ReadFile(o + "agent"))),
                                    static_cast<pid_t>(std::stol(ReadFile(o + "job")))};
  BOOST_REQUIRE_EQUAL(kill(supervisor, SIGKILL), 0);
  std::vector<pid_t> alive = WaitGone(agent, 20000);
  for (pid_t p : alive) {
    BOOST_ERROR(DescribeProcess(p) << " still runs after guard was killed");
    kill(p, SIGKILL);
  }
  guard.Wait();
  BOOST_REQUIRE(PathExists(ws.home() + "/sessions/" + k.id + "/alive"));
  WaitPastKeeperStamp(ws, k.id);
  k.at_mark = SnapshotTree(o + "at_mark");
  k.at_kill = SnapshotTree(ws.tree()).Without(".git");
  BOOST_REQUIRE(DiffSnapshots(k.at_mark, k.at_kill).size() > 0);
  return k;
}

void Revert(const Workspace& ws) { InGit(ws, "git checkout -- . && git clean -fdq"); }

void ReplayGives(const Workspace& ws, const std::string& id, const TreeSnapshot& expected) {
  GuardResult replay = RunGuardWithin(ws, {"replay", "--yes", "--session", id}, kTimeoutSeconds);
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  std::vector<std::string> diff = DiffSnapshots(expected, SnapshotTree(ws.tree()).Without(".git"));
  BOOST_TEST(diff.empty(), "after replay: " << (diff.empty() ? "" : diff.front()));
}

// The next guard command (here `guard sessions`) recovers the session
// before the tree is reverted: its catch-up records what the agent did
// after the mark, and replay gives the whole work back.
BOOST_AUTO_TEST_CASE(GuardKilledTheAgentStopsAndReplayGivesTheWholeWorkBackAfterARevert) {
  Workspace ws;
  WatchKill k = KillGuardInAWatchSession(ws);
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(listed.err.find("recorded as the session's") != std::string::npos, listed.err);
  Revert(ws);
  BOOST_REQUIRE(DiffSnapshots(k.before, SnapshotTree(ws.tree()).Without(".git")).empty());
  ReplayGives(ws, k.id, k.at_kill);
  // And undo gives the tree before the session back.
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", k.id, "--force"}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::vector<std::string> diff = DiffSnapshots(k.before, SnapshotTree(ws.tree()).Without(".git"));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()));
}

// The tree reverted before any guard command: what the agent did after
// its last save is gone from the tree and was never saved; the catch-up
// does not take the revert for the session's work (it came after the
// keeper's stamp), and replay gives back the work saved, exactly.
BOOST_AUTO_TEST_CASE(GuardKilledAndTheTreeRevertedFirstReplayGivesTheSavedWorkBack) {
  Workspace ws;
  WatchKill k = KillGuardInAWatchSession(ws);
  Revert(ws);
  BOOST_REQUIRE(DiffSnapshots(k.before, SnapshotTree(ws.tree()).Without(".git")).empty());
  ReplayGives(ws, k.id, k.at_mark);
}

}  // namespace
}  // namespace guard::e2e
