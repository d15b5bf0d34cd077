// A forget or a gc while an undo runs: the undo has pinned the store
// (PinStore, $GUARD_HOME/gc.lock shared), so the forget waits for it, says
// so in one line, and the undo restores every file byte for byte; then the
// forget does its work. The race is provoked by a test-only pause point
// (GUARD_TEST_PAUSE_RESTORE: the undo stops with its plan made, before it
// changes anything), not by sleeps. Without the pin, the forget swept the
// blobs of an `rm -rf` of 3,000 files under the running undo, and files were
// gone from the tree and the store for good.
#define BOOST_TEST_MODULE gc_beside_restore
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/store_checks.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// Polls (every 10 ms, at most 60 s) until `done` holds; false on timeout.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 6000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether `pid`, a child not yet reaped, has ended (a zombie, or gone).
bool Ended(pid_t pid) {
  std::string stat;
  try {
    stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  } catch (const std::exception&) {
    return true;
  }
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

void RunBeside(const std::vector<std::string>& beside, const std::string& wait_line) {
  Workspace ws;
  ws.Mkdir("d");
  for (int i = 0; i < 300; ++i) ws.Write("d/f" + std::to_string(i), "content of file " + std::to_string(i) + "\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult session = RunGuardBash(ws, "rm -rf d");
  BOOST_REQUIRE_MESSAGE(session.exit_code == 0 && session.new_sessions.size() == 1, DescribeResult(session));
  const std::string id = session.new_sessions[0];
  AgeStore(ws.home(), 7200);  // old enough for a sweep to take what no session names

  const std::string pause = ws.dir() + "/pause";
  ProcessSpec undo = GuardSpec(ws, GuardRun{});
  undo.argv = {GuardBinary(), "undo", "--yes", "--session", id};
  undo.cwd = ws.tree();
  undo.env["GUARD_TEST_PAUSE_RESTORE"] = pause;
  ChildProcess undoing(undo);
  BOOST_REQUIRE_MESSAGE(Eventually([&] { return access(pause.c_str(), F_OK) == 0; }), "the undo never paused");

  // The forget (or gc) beside it, its stderr in a file the test reads as it runs.
  const std::string err = ws.dir() + "/beside.err";
  ProcessSpec other = GuardSpec(ws, GuardRun{});
  std::string cmd = "exec '" + GuardBinary() + "'";
  for (const std::string& a : beside) cmd += " '" + (a == "ID" ? id : a) + "'";
  other.argv = {"bash", "-c", cmd + " 2>'" + err + "'"};
  other.cwd = ws.tree();
  ChildProcess besides(other);
  bool waited = Eventually([&] {
    std::string text;
    if (access(err.c_str(), F_OK) == 0) text = ReadFile(err);
    if (text.find(wait_line) != std::string::npos) return true;
    return Ended(besides.pid());  // it ran through without waiting
  });
  BOOST_TEST(waited);
  BOOST_TEST(ReadFile(err).find(wait_line) != std::string::npos,
             "the " << beside[0] << " did not wait for the undo: " << ReadFile(err));
  unlink(pause.c_str());

  ProcessResult undone = undoing.Wait();
  BOOST_TEST(undone.exit_code == 0, DescribeResult(undone));
  ProcessResult done = besides.Wait();
  BOOST_TEST(done.exit_code == 0, DescribeResult(done));
  std::vector<std::string> diffs = DiffSnapshots(before, SnapshotTree(ws.tree()));
  std::string all;
  for (const std::string& d : diffs) all += "\n  " + d;
  BOOST_TEST(diffs.empty(), "the tree after the undo differs:" << all);
}

BOOST_AUTO_TEST_CASE(AForgetDuringAnUndoWaitsForItAndTheUndoIsExact) {
  RunBeside({"forget", "--yes", "ID"}, "guard forget: waiting for a restore or another gc to finish");
}

BOOST_AUTO_TEST_CASE(AGcDuringAnUndoWaitsForItAndTheUndoIsExact) {
  RunBeside({"gc", "--keep", "0s", "--keep-newest", "0"}, "guard gc: waiting for a restore or another gc to finish");
}

}  // namespace
}  // namespace guard::e2e
