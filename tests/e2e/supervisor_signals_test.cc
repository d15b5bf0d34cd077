// A process of the session that tries to stop, kill or starve guard
// (tests/programs/stop_supervisor.c): every way that reaches guard with
// SIGSTOP or SIGKILL, or lowers its limits, is refused; every signal guard
// can take leaves it running; a SIGSTOP to the process group guard shares
// with the command stops the command and not guard; and the session goes
// on to record what the program changes after. docs/security.md, "guard out
// of the session's reach". Unit twin: unit.signal_call_test.
//
// Not under --mode preload: nothing stops a call there (docs/security.md).
#define BOOST_TEST_MODULE supervisor_signals
#include <boost/test/unit_test.hpp>

#include <string>

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

}  // namespace
}  // namespace guard::e2e
