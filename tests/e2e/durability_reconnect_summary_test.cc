// The summary on reconnect (docs/durability.md): when `guard -- CMD` starts
// in a root whose previous session ended abnormally (its agent killed, or
// guard itself killed and the session recovered), guard says so on stderr
// before running CMD: the session id, the command, how it ended, how many
// files it changed and the first of them, and the three commands to review,
// re-apply or revert it. It never waits for input, says nothing after a
// normal session, and nothing at all with --quiet.
#define BOOST_TEST_MODULE durability_reconnect_summary
#include <signal.h>
#include <time.h>

#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// Seven files, so that the summary names the first five and counts the rest.
constexpr const char* kAgentLoop = "for f in a b c d e f g; do echo $f > $f.txt; done";
constexpr int kAgentFiles = 7;

// A session whose agent changes seven files and then kills itself with
// SIGKILL (as the OOM killer would). Returns the session id.
std::string AgentKilledSession(const Workspace& ws, std::string* command) {
  GuardRun run;
  run.command = {"bash", "-c", std::string(kAgentLoop) + "; kill -KILL $$"};
  *command = "bash -c " + run.command[2];
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 137, "the self-killed agent: " << DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  BOOST_REQUIRE_EQUAL(SessionStateOf(ws, r.new_sessions[0]), "killed");
  return r.new_sessions[0];
}

// A session whose guard is killed with SIGKILL once its agent has changed
// seven files and sits idle. Returns the session id; the session is left
// unrecovered.
std::string GuardKilledSession(const Workspace& ws, std::string* command) {
  GuardRun run;
  // Short enough for the summary to show the whole command (it cuts at 100).
  run.command = {"bash", "-c", std::string(kAgentLoop) + "; :>../outside/ready; exec sleep 600"};
  *command = "bash -c " + run.command[2];
  run.timeout_seconds = 60;
  ChildProcess guard_proc(GuardSpec(ws, run));
  for (int i = 0; i < 30000 && !PathExists(ws.outside() + "/ready"); ++i) {
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  BOOST_REQUIRE_MESSAGE(PathExists(ws.outside() + "/ready"), "the agent never got ready");
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  kill(guard_proc.pid(), SIGKILL);
  ProcessResult r = guard_proc.Wait();
  BOOST_REQUIRE_EQUAL(r.exit_code, 128 + SIGKILL);
  BOOST_REQUIRE_MESSAGE(WaitGone(ProcessesWithEnv("GUARD_SESSION", ids[0]), 5000).empty(),
                        "the agent survived guard");
  // The supervisor may still be exiting, and in watch mode the keeper
  // stamping: the next guard recovers a session only once both are done.
  WaitPastKeeperStamp(ws, ids[0]);
  return ids[0];
}

// What guard's stdin is while it prints the summary.
enum class Stdin {
  kDevNull,
  kClosed,
  // A pipe that stays open and empty for 25 s: a guard that read from it
  // (to ask something) would hang past the deadline.
  kSilentPipe,
};

// `guard [--quiet] --root TREE -- true` under a 20 s deadline: the summary
// must not wait for an answer.
ProcessResult GuardTrue(const Workspace& ws, bool quiet, Stdin in = Stdin::kDevNull) {
  GuardRun run;
  run.command = {"true"};
  run.quiet = quiet;
  run.timeout_seconds = 20;
  ProcessSpec spec = GuardSpec(ws, run);
  // The writer of the silent pipe (a FIFO) is started in a subshell that
  // exits at once: a child of the process that becomes guard would be
  // waited for by guard like the command's own.
  const char* wrapper = in == Stdin::kClosed       ? "exec 0<&- && exec \"$@\""
                        : in == Stdin::kSilentPipe ? "f=../outside/silent-stdin && mkfifo $f && "
                                                     "(sleep 25 >$f 2>/dev/null &) && exec \"$@\" <$f"
                                                   : nullptr;
  if (wrapper != nullptr) {
    std::vector<std::string> argv = {"bash", "-c", wrapper, "bash"};
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
    spec.argv = argv;
  }
  ProcessResult r = RunProcess(spec);
  BOOST_TEST(!r.timed_out, "guard -- true hung: " << DescribeResult(r));
  BOOST_TEST(r.exit_code == 0, "guard -- true: " << DescribeResult(r));
  return r;
}

// Everything the summary must hold for session `id`.
void ExpectSummary(const std::string& err, const std::string& id, const std::string& command,
                   const std::string& how) {
  BOOST_TEST(Contains(err, id), "no session id in:\n" << err);
  BOOST_TEST(Contains(err, command), "no command '" << command << "' in:\n" << err);
  BOOST_TEST(Contains(err, how), "no '" << how << "' in:\n" << err);
  BOOST_TEST(Contains(err, std::to_string(kAgentFiles) + " files changed: a.txt, b.txt, c.txt, d.txt, e.txt"),
             "no count and first paths in:\n" << err);
  BOOST_TEST(Contains(err, "guard diff --session " + id), "no review command in:\n" << err);
  BOOST_TEST(Contains(err, "guard replay --session " + id), "no re-apply command in:\n" << err);
  BOOST_TEST(Contains(err, "guard undo --session " + id), "no revert command in:\n" << err);
}

bool HasSummary(const std::string& err) { return Contains(err, "ended abnormally") || Contains(err, "--session"); }

BOOST_AUTO_TEST_CASE(SummaryAfterAKilledAgentNamesTheSessionAndTheWayBack) {
  Workspace ws;
  std::string command;
  std::string id = AgentKilledSession(ws, &command);
  ProcessResult r = GuardTrue(ws, /*quiet=*/false);
  ExpectSummary(r.err, id, command, "killed by SIGKILL");
}

BOOST_AUTO_TEST_CASE(SummaryIsPrintedWithStdinClosed) {
  Workspace ws;
  std::string command;
  std::string id = AgentKilledSession(ws, &command);
  ProcessResult r = GuardTrue(ws, /*quiet=*/false, Stdin::kClosed);
  ExpectSummary(r.err, id, command, "killed by SIGKILL");
}

BOOST_AUTO_TEST_CASE(SummaryDoesNotWaitForInputOnAnOpenStdin) {
  Workspace ws;
  std::string command;
  std::string id = AgentKilledSession(ws, &command);
  ProcessResult r = GuardTrue(ws, /*quiet=*/false, Stdin::kSilentPipe);
  ExpectSummary(r.err, id, command, "killed by SIGKILL");
}

BOOST_AUTO_TEST_CASE(SummaryAfterAKilledGuardSaysTheSessionWasRecovered) {
  Workspace ws;
  std::string command;
  std::string id = GuardKilledSession(ws, &command);
  // No `guard recover` first: the run recovers the session itself.
  ProcessResult r = GuardTrue(ws, /*quiet=*/false);
  BOOST_TEST(Contains(r.err, "recovered session " + id), "no recovery line in:\n" << r.err);
  ExpectSummary(r.err, id, command, "recovered");
  BOOST_TEST(SessionStateOf(ws, id) == "recovered");
}

BOOST_AUTO_TEST_CASE(SummaryAfterAnExplicitRecoverSaysTheSessionWasRecovered) {
  Workspace ws;
  std::string command;
  std::string id = GuardKilledSession(ws, &command);
  ProcessResult rec = RunGuardWithin(ws, {"recover"}, 20);
  BOOST_REQUIRE_MESSAGE(rec.exit_code == 0 && Contains(rec.err, "recovered session " + id), DescribeResult(rec));
  ProcessResult r = GuardTrue(ws, /*quiet=*/false);
  ExpectSummary(r.err, id, command, "recovered");
}

BOOST_AUTO_TEST_CASE(SummaryIsShownOnceThenNotAfterTheNormalSessionThatFollows) {
  Workspace ws;
  std::string command;
  std::string id = AgentKilledSession(ws, &command);
  ProcessResult first = GuardTrue(ws, /*quiet=*/false);
  BOOST_TEST(Contains(first.err, id), "no summary in:\n" << first.err);
  ProcessResult second = GuardTrue(ws, /*quiet=*/false);
  BOOST_TEST(!HasSummary(second.err), "a summary after a normal session:\n" << second.err);
}

BOOST_AUTO_TEST_CASE(NoSummaryAfterANormalSession) {
  Workspace ws;
  GuardRun run;
  run.command = {"bash", "-c", kAgentLoop};
  GuardResult normal = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(normal.exit_code, 0);
  ProcessResult r = GuardTrue(ws, /*quiet=*/false);
  BOOST_TEST(!HasSummary(r.err), "a summary after a normal session:\n" << r.err);
}

BOOST_AUTO_TEST_CASE(NoSummaryAfterACommandThatFailedByItself) {
  Workspace ws;
  GuardRun run;
  run.command = {"bash", "-c", std::string(kAgentLoop) + "; exit 3"};
  GuardResult failed = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(failed.exit_code, 3);
  ProcessResult r = GuardTrue(ws, /*quiet=*/false);
  BOOST_TEST(!HasSummary(r.err), "a summary after a session that exited 3:\n" << r.err);
}

BOOST_AUTO_TEST_CASE(NoSummaryWithQuiet) {
  Workspace ws;
  std::string command;
  AgentKilledSession(ws, &command);
  ProcessResult r = GuardTrue(ws, /*quiet=*/true);
  BOOST_TEST(r.err.empty(), "guard --quiet printed:\n" << r.err);
}

BOOST_AUTO_TEST_CASE(NoSummaryWithQuietAfterAKilledGuardEither) {
  Workspace ws;
  std::string command;
  std::string id = GuardKilledSession(ws, &command);
  ProcessResult r = GuardTrue(ws, /*quiet=*/true);
  BOOST_TEST(r.err.empty(), "guard --quiet printed:\n" << r.err);
  BOOST_TEST(SessionStateOf(ws, id) == "recovered");
}

}  // namespace
}  // namespace guard::e2e
