// A restore killed mid-way: `guard undo` gets SIGKILL while it stages the
// files it writes over others (each staged beside its place as
// ".guard-restore.PID.N", renamed into place at the end). Recovery of the
// restore session removes the staged copies, and a second undo gives back
// the tree byte for byte. A file whose name is absent is written in place,
// not staged: killed while it writes those, the undo is finished the same
// way.
#define BOOST_TEST_MODULE restore_interrupted
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// The names in `dir` that start with ".guard-restore." (-1 if it cannot be read).
int StagedCount(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += std::string(e->d_name).rfind(".guard-restore.", 0) == 0;
  closedir(d);
  return n;
}

// The number of entries in `dir` (-1 if it cannot be read).
int EntryCount(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

BOOST_AUTO_TEST_CASE(RecoveryOfAKilledUndoRemovesItsStagedFiles) {
  Workspace ws;
  ws.Mkdir("d");
  for (int i = 0; i < 3000; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "d/f%04d", i);
    ws.Write(name, "content of " + std::string(name) + "\n");
  }
  ws.Write("other.guard-restore.1.2", "a file of the user's whose name only looks staged\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  // Written over, so that the undo stages what it writes back.
  GuardResult run = RunGuardBash(ws, "for f in d/f*; do echo changed >\"$f\"; done");
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0 && run.new_sessions.size() == 1, DescribeResult(run));
  std::string session = run.new_sessions[0];

  // Killed once the first staged file appears (long before the last: the
  // rename into place starts after all of them are written and synced).
  ProcessSpec spec;
  // Its output goes nowhere: nobody reads the pipes before the kill, and a
  // plan of 3000 lines would fill them. (exec: the pid is guard's.)
  spec.argv = {"bash", "-c", "exec \"$0\" undo --yes --session \"$1\" >/dev/null 2>&1", GuardBinary(), session};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.timeout_seconds = 300;
  ChildProcess undo(spec);
  bool seen = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);  // a hang guard only
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    seen = StagedCount(ws.Path("d")) > 0;
    siginfo_t info{};
    if (!seen && waitid(P_PID, static_cast<id_t>(undo.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid != 0) {
      break;  // it ended first
    }
  }
  if (seen) kill(undo.pid(), SIGKILL);
  ProcessResult killed = undo.Wait();
  BOOST_REQUIRE_MESSAGE(seen, "the undo ended before any staged file was seen:\n" << DescribeResult(killed));
  int left = StagedCount(ws.Path("d"));
  BOOST_REQUIRE_MESSAGE(left > 0, "no staged file left by the kill; nothing to test");
  BOOST_TEST_MESSAGE(left << " staged files left by the kill");

  GuardResult recover = RunGuardCommand(ws, {"recover"});
  BOOST_TEST(recover.exit_code == 0, DescribeResult(recover));
  BOOST_TEST(StagedCount(ws.Path("d")) == 0, DescribeResult(recover));
  BOOST_TEST(ws.Exists("other.guard-restore.1.2"), "a file the restore never made was removed");

  GuardResult again = RunGuardCommand(ws, {"undo", "--yes", "--session", session});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  std::string text;
  for (const std::string& d : DiffSnapshots(before, SnapshotTree(ws.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "the tree differs (expected, found):\n" << text << DescribeResult(again));
}

// The undo of an `rm -rf` writes every file in place (its name is absent):
// killed once some are back, it leaves them, maybe the last one short; the
// same undo typed again checks each by content and gives back the tree
// byte for byte.
BOOST_AUTO_TEST_CASE(AKilledUndoWritingInPlaceIsFinishedByTheSameUndo) {
  Workspace ws;
  ws.Mkdir("d");
  for (int i = 0; i < 3000; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "d/f%04d", i);
    ws.Write(name, "content of " + std::string(name) + "\n" + std::string(static_cast<size_t>(i) * 7, 'x'));
  }
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult run = RunGuardBash(ws, "rm -rf d");
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0 && run.new_sessions.size() == 1, DescribeResult(run));
  std::string session = run.new_sessions[0];

  ProcessSpec spec;
  spec.argv = {"bash", "-c", "exec \"$0\" undo --yes --session \"$1\" >/dev/null 2>&1", GuardBinary(), session};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.timeout_seconds = 300;
  ChildProcess undo(spec);
  bool seen = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);  // a hang guard only
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    seen = EntryCount(ws.Path("d")) > 10;
    siginfo_t info{};
    if (!seen && waitid(P_PID, static_cast<id_t>(undo.pid()), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid != 0) {
      break;  // it ended first
    }
  }
  if (seen) kill(undo.pid(), SIGKILL);
  ProcessResult killed = undo.Wait();
  BOOST_REQUIRE_MESSAGE(seen, "the undo ended before any file was back:\n" << DescribeResult(killed));
  int back = EntryCount(ws.Path("d"));
  BOOST_REQUIRE_MESSAGE(back > 0 && back < 3000, back << " files back after the kill; nothing to test");
  BOOST_TEST(StagedCount(ws.Path("d")) == 0, "a file with an absent name was staged");
  BOOST_TEST_MESSAGE(back << " files back when killed");

  GuardResult again = RunGuardCommand(ws, {"undo", "--yes", "--session", session});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(again.out.find("conflict") == std::string::npos, DescribeResult(again));
  std::string text;
  for (const std::string& d : DiffSnapshots(before, SnapshotTree(ws.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "the tree differs (expected, found):\n" << text << DescribeResult(again));
}

// `guard undo --yes | head -1`: the reader goes away after the plan's first
// line. The undo finishes all the same (a closed stdout is no reason to stop
// half-way), records its own session as finished, and the tree is exact.
// Before, SIGPIPE killed it: with thousands of files nothing was restored,
// and with a few hundred its own session was left unfinished, which status
// then called "guard itself was stopped mid-session".
BOOST_AUTO_TEST_CASE(AnUndoWhoseReaderGoesAwayFinishesAndRecordsItself) {
  Workspace ws;
  ws.Mkdir("d");
  for (int i = 0; i < 2000; ++i) ws.Write("d/f" + std::to_string(i), "file " + std::to_string(i) + "\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult removed = RunGuardBash(ws, "rm -rf d");
  BOOST_REQUIRE_MESSAGE(removed.exit_code == 0 && removed.new_sessions.size() == 1, DescribeResult(removed));
  const std::string session = removed.new_sessions[0];

  ProcessSpec spec = GuardSpec(ws, GuardRun{});
  spec.argv = {"bash", "-c", "set -o pipefail; '" + GuardBinary() + "' undo --yes --session " + session + " | head -1"};
  spec.cwd = ws.tree();
  ProcessResult piped = RunProcess(spec);
  BOOST_TEST(piped.out.find("guard undo: session " + session) == 0, DescribeResult(piped));
  BOOST_TEST(piped.exit_code == 0, "the undo did not finish: " << DescribeResult(piped));
  std::string text;
  for (const std::string& d : DiffSnapshots(before, SnapshotTree(ws.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "the tree differs (expected, found):\n" << text);

  GuardResult sessions = RunGuardCommand(ws, {"sessions", "--json"});
  BOOST_REQUIRE(sessions.exit_code == 0);
  nlohmann::json all = nlohmann::json::parse(sessions.out);
  BOOST_REQUIRE_EQUAL(all.size(), 2u);
  for (const nlohmann::json& s : all) BOOST_TEST(s["state"] == "finished", s.dump());
  GuardResult status = RunGuardCommand(ws, {"status"});
  BOOST_TEST(status.out.find("stopped mid-session") == std::string::npos, DescribeResult(status));
}

}  // namespace
}  // namespace guard::e2e
