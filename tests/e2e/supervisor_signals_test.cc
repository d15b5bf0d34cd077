// A process of the session that tries to stop, kill or starve guard
// (tests/programs/stop_supervisor.c): every way that reaches guard with
// SIGSTOP or SIGKILL, or lowers its limits, is refused; every signal guard
// can take leaves it running; a SIGSTOP to the process group guard shares
// with the command stops the command and not guard; and the session goes
// on to record what the program changes after. docs/security.md, "guard out
// of the session's reach". Unit twin: unit.signal_call_test.
//
// Under --mode preload no tracer stops a call: there the kernel refuses a
// signal from the session to guard where it has Landlock scopes (Linux
// 6.12: trace/signal_scope.h), and the test says when it cannot apply.
#define BOOST_TEST_MODULE supervisor_signals
#include <boost/test/unit_test.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"

namespace guard::e2e {
namespace {

constexpr const char* kVictim = "victim.txt";
constexpr const char* kContent = "the user's work, which must survive\n";

BOOST_AUTO_TEST_CASE(NoProcessOfTheSessionCanStopOrKillGuard) {
  Workspace ws;
  ws.Write(kVictim, kContent);
  GuardRun run;
  run.command = {TestProgram("stop_supervisor"), kVictim};
  // The program signals the group it runs in: not the test's.
  run.new_process_group = true;
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST_MESSAGE("stdout: " << r.out << "stderr: " << r.err);
  BOOST_TEST(!r.timed_out);
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("REACHED") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("KILLED") == std::string::npos, r.out);
  for (const char* sig : {"SIGSTOP", "SIGKILL"}) {
    for (const char* way : {"kill supervisor", "kill front", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
                            "pidfd_send_signal"}) {
      const std::string line = std::string("refused: ") + way + " " + sig;
      BOOST_TEST(r.out.find(line) != std::string::npos, line);
    }
  }
  BOOST_TEST(r.out.find("refused: prlimit64 RLIMIT_FSIZE") != std::string::npos);
  BOOST_TEST(r.out.find("refused: fcntl F_SETSIG SIGSTOP") != std::string::npos);
  for (const char* sig : {"SIGVTALRM", "SIGPROF", "SIGUSR2", "SIGSEGV", "SIGRTMIN+3"}) {
    BOOST_TEST(r.out.find(std::string("survived: ") + sig) != std::string::npos, sig);
  }
  BOOST_TEST(r.out.find("group: kill rc 0; this process stopped; guard ran on") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("done, 0 failure(s)") != std::string::npos, r.out);
  // The unlink after all that was recorded: undo brings the victim back.
  BOOST_REQUIRE(!ws.Exists(kVictim));
  GuardRun undo;
  ProcessSpec spec = GuardSpec(ws, undo);
  spec.argv = {GuardBinary(), "undo", "--yes"};
  spec.cwd = ws.tree();
  ProcessResult u = RunProcess(spec);
  BOOST_TEST_MESSAGE("undo: " << u.out << u.err);
  BOOST_REQUIRE(ws.Exists(kVictim));
  BOOST_TEST(ws.Read(kVictim) == kContent);
}

// Under preload guard is the command's parent: SIGSTOP and SIGKILL to it,
// and SIGSTOP to the group it shares with the command, leave it running,
// and the session records what follows.
BOOST_AUTO_TEST_CASE(UnderPreloadTheKernelRefusesSignalsToGuardWhereItHasScopes) {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u);
  if (abi < 6) {
    BOOST_TEST_MESSAGE("skipped: this kernel has no Landlock scopes (ABI " << abi << "; Linux 6.12 has 6)");
    return;
  }
  Workspace ws;
  ws.Write(kVictim, kContent);
  GuardRun run;
  run.guard_options = {"--mode", "preload"};
  run.command = {"bash", "-c",
                 "kill -STOP $PPID; echo stop=$?; kill -KILL $PPID; echo kill=$?; "
                 "kill -s SIGUSR2 $PPID 2>/dev/null; echo usr2=$?; rm " + std::string(kVictim)};
  run.new_process_group = true;
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(!r.timed_out);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out.find("stop=1\nkill=1\nusr2=1\n") != std::string::npos, r.out);
  BOOST_REQUIRE(!ws.Exists(kVictim));
  ProcessSpec spec = GuardSpec(ws, GuardRun{});
  spec.argv = {GuardBinary(), "undo", "--yes"};
  spec.cwd = ws.tree();
  ProcessResult u = RunProcess(spec);
  BOOST_TEST(u.exit_code == 0, u.out << u.err);
  BOOST_TEST(ws.Read(kVictim) == kContent);
}

}  // namespace
}  // namespace guard::e2e
