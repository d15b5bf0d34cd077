// guard killed under --mode preload: no tracer holds the session's
// processes (no PTRACE_O_EXITKILL), yet they stop with guard. The keeper
// (supervisor/session/session_keeper.h) kills every process of the
// session's user namespace: a background job, a process that left the
// command's session by setsid, and an orphan the command left behind, as
// well as the command itself. The session is then recovered by the next
// guard command and undone as any other.
#define BOOST_TEST_MODULE preload_guard_kill
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

pid_t ReadPid(const std::string& path) { return static_cast<pid_t>(std::stol(ReadFile(path))); }

BOOST_AUTO_TEST_CASE(KillingGuardStopsEveryProcessTheCommandStarted) {
  Workspace ws;
  ws.Write("kept.txt", "before\n");
  const std::string o = ws.outside() + "/";
  // Each process writes its pid beside the tree; the last line says all
  // are running, and which process is the supervisor (bash's parent).
  const std::string script =
      "echo changed > kept.txt\n"
      "sleep 1000 & echo $! > " + Quoted(o + "job") + "\n" +
      "setsid sh -c 'echo $$ > " + o + "detached; exec sleep 1000' &\n" +
      "sh -c 'sleep 1000 & echo $! > " + o + "orphan'\n" +
      "while [ ! -s " + Quoted(o + "detached") + " ]; do sleep 0.01; done\n" +
      "echo $$ > " + Quoted(o + "command") + "\n" +
      "echo $PPID > " + Quoted(o + "ready.tmp") + "; mv " + Quoted(o + "ready.tmp") + " " + Quoted(o + "ready") + "\n" +
      "wait\n";
  GuardRun run;
  run.command = {"bash", "-c", script};
  run.guard_options = {"--mode", "preload"};
  run.timeout_seconds = 120;
  ChildProcess guard(GuardSpec(ws, run));
  for (int i = 0; i < 2400 && !PathExists(o + "ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_REQUIRE_MESSAGE(PathExists(o + "ready"), "the session's command did not start");
  const pid_t supervisor = ReadPid(o + "ready");
  const std::vector<pid_t> session = {ReadPid(o + "command"), ReadPid(o + "job"), ReadPid(o + "detached"),
                                      ReadPid(o + "orphan")};
  for (pid_t p : session) BOOST_REQUIRE_MESSAGE(!ProcessGone(p), DescribeProcess(p) << " is not running");

  BOOST_REQUIRE_EQUAL(kill(supervisor, SIGKILL), 0);
  std::vector<pid_t> alive = WaitGone(session, 20000);
  for (pid_t p : alive) {
    BOOST_ERROR(DescribeProcess(p) << " still runs after guard was killed");
    kill(p, SIGKILL);
  }
  ProcessResult front = guard.Wait();
  BOOST_TEST(front.exit_code != 0, DescribeResult(front));
  BOOST_REQUIRE_EQUAL(ws.SessionIds().size(), 1u);
  WaitPastKeeperStamp(ws, ws.SessionIds()[0]);  // the supervisor may still be exiting

  // The next guard command recovers the session; its undo gives the tree back.
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("kept.txt") == "before\n");
}

}  // namespace
}  // namespace guard::e2e
