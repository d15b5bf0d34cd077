// A program written to get past guard (tests/programs/bypass_attempts.c):
// each attempt must either be refused or be recorded, so that undo puts the
// victim back byte for byte. docs/security.md lists what these check.
#define BOOST_TEST_MODULE security_bypass
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <string>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/session_view.h"

namespace guard::e2e {
namespace {

constexpr const char* kVictim = "victim.txt";
constexpr const char* kContent = "the user's work, which must survive\n";

GuardResult Run(const Workspace& ws, std::vector<std::string> command) {
  GuardRun run;
  run.command = std::move(command);
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST_MESSAGE("stdout: " << r.out << "stderr: " << r.err);
  return r;
}

// After the session, undo must bring the victim back as it was.
void ExpectUndoRestoresVictim(const Workspace& ws) {
  GuardRun undo;
  undo.command = {};
  ProcessSpec spec = GuardSpec(ws, undo);
  spec.argv = {GuardBinary(), "undo", "--yes"};
  spec.cwd = ws.tree();
  ProcessResult u = RunProcess(spec);
  BOOST_TEST_MESSAGE("undo: " << u.out << u.err);
  BOOST_REQUIRE(ws.Exists(kVictim));
  BOOST_TEST(ws.Read(kVictim) == kContent);
}

BOOST_AUTO_TEST_CASE(SeccompListenerThatAnswersContinueIsRefused) {
  Workspace ws;
  ws.Write(kVictim, kContent);
  GuardResult r = Run(ws, {TestProgram("bypass_attempts"), "listener", kVictim});
  BOOST_TEST(r.out.find("listener: refused") != std::string::npos, r.out);
  // The unlink that follows goes through guard's filter as any other.
  ExpectUndoRestoresVictim(ws);
}

BOOST_AUTO_TEST_CASE(IoUringInheritedFromOutsideCannotUnlink) {
  Workspace ws;
  ws.Write(kVictim, kContent);
  GuardRun run;
  run.command = {TestProgram("bypass_attempts")};
  ProcessSpec spec = GuardSpec(ws, run);
  // The ring is made outside guard; guard and the command inherit its fd.
  spec.argv.insert(spec.argv.begin(), {TestProgram("bypass_attempts"), "uring-setup",
                                       ws.Path(kVictim), "--"});
  ProcessResult r = RunProcess(spec);
  BOOST_TEST_MESSAGE("stdout: " << r.out << "stderr: " << r.err);
  BOOST_TEST(r.out.find("io_uring_enter: refused") != std::string::npos, r.out);
  BOOST_TEST(ws.Exists(kVictim));
  ExpectUndoRestoresVictim(ws);
}

BOOST_AUTO_TEST_CASE(FdTakenFromAnotherProcessWithPidfdGetfdIsRefused) {
  Workspace ws;
  ws.Write(kVictim, kContent);
  ProcessSpec holder_spec;
  holder_spec.argv = {TestProgram("bypass_attempts"), "hold", ws.Path(kVictim)};
  holder_spec.timeout_seconds = 120;
  ChildProcess holder(holder_spec);
  // The holder prints its fd number once it has the file open; read it
  // from /proc instead of its pipe, so as not to consume Wait()'s output.
  std::string fd;
  for (int i = 0; i < 2000 && fd.empty(); ++i) {
    for (int n = 3; n < 64; ++n) {
      char link[256];
      std::string p = "/proc/" + std::to_string(holder.pid()) + "/fd/" + std::to_string(n);
      ssize_t len = readlink(p.c_str(), link, sizeof link - 1);
      if (len > 0 && std::string(link, static_cast<size_t>(len)) == ws.Path(kVictim)) {
        fd = std::to_string(n);
        break;
      }
    }
    if (fd.empty()) usleep(10 * 1000);
  }
  BOOST_REQUIRE(!fd.empty());
  GuardResult r = Run(ws, {TestProgram("bypass_attempts"), "getfd", std::to_string(holder.pid()), fd});
  kill(holder.pid(), SIGKILL);
  holder.Wait();
  BOOST_TEST(r.out.find("pidfd_getfd: refused") != std::string::npos, r.out);
  BOOST_TEST(ws.Read(kVictim) == kContent);
}

BOOST_AUTO_TEST_CASE(TraceeCannotTraceOrWriteIntoTheSupervisor) {
  Workspace ws;
  GuardResult r = Run(ws, {TestProgram("bypass_attempts"), "tracer"});
  BOOST_TEST(r.out.find("ptrace: refused") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("process_vm_writev: refused") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("mem: refused") != std::string::npos, r.out);
}

}  // namespace
}  // namespace guard::e2e
