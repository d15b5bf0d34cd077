// guard --mode watch: no tracer, no shim; the tree is watched and each
// change saved after it happened (docs/capture.md, "Watch mode"). What no
// other mode sees without a tracer is captured and undone byte for byte (a
// static busybox's rm -rf, a program that empties its environment); a burst
// past the kernel's event queue is caught up by a rescan with nothing
// missed; files made in a new directory before its watch exists are
// caught; a tree renamed into and out of the root is undone; replay gives
// the session's work back. Unit twins: tests/unit/watch/watch_session_test.cc.
#define BOOST_TEST_MODULE watch_mode
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_stats.h"
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

}  // namespace
}  // namespace guard::e2e
