// guard as a job whose command is stopped and continued by others than the
// terminal (kill -STOP, kill -CONT, a debugger, a freezer): guard stops with
// its command, continues with it, and ends with it whatever state it is in,
// so that a script's `wait` returns; a signal sent to guard while it is
// stopped reaches the command. (Ctrl-Z and fg from a real terminal are the
// same path, with SIGTSTP sent by the terminal.)
#define BOOST_TEST_MODULE stopped_command
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "common/session_meta.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// Hang guard only: every wait below ends as soon as its condition holds.
constexpr int kHangGuardSeconds = 60;

// The state letter of /proc/PID/stat ('R', 'S', 'T', 't', 'Z'...), or '\0'
// once the process is gone.
char ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? '\0' : stat[paren + 2];
}

bool IsStopped(char state) { return state == 'T' || state == 't'; }

template <typename Condition>
bool WaitUntil(Condition done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kHangGuardSeconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// guard running a command that writes its pid and then waits for `go`
// before it exits 5. guard leads a process group of its own, as a job of an
// interactive shell does (a terminal stop is dropped in an orphaned group).
class StoppableRun {
 public:
  explicit StoppableRun(const Workspace& ws) : ws_(ws) {
    GuardRun run;
    std::string pid_file = ws.outside() + "/pid";
    run.command = {"sh", "-c",
                   "echo $$ > '" + pid_file + ".tmp' && mv '" + pid_file + ".tmp' '" + pid_file + "'; " +
                       "while [ ! -e '" + go() + "' ]; do sleep 0.02; done; echo done > marker; exit 5"};
    run.timeout_seconds = kHangGuardSeconds;
    run.new_process_group = true;
    guard_ = std::make_unique<ChildProcess>(GuardSpec(ws, run));
    BOOST_REQUIRE_MESSAGE(WaitUntil([&] { return PathExists(pid_file); }), "the command never started");
    command_ = std::stoi(ReadFile(pid_file));
  }

  pid_t guard() const { return guard_->pid(); }
  pid_t command() const { return command_; }
  std::string go() const { return ws_.outside() + "/go"; }
  ProcessResult Wait() { return guard_->Wait(); }

  // Stops the command with SIGSTOP and waits until guard has stopped too.
  void StopCommand() {
    BOOST_REQUIRE_EQUAL(kill(command_, SIGSTOP), 0);
    BOOST_REQUIRE_MESSAGE(WaitUntil([&] { return IsStopped(ProcessState(guard())); }),
                          "guard did not stop with its command");
  }

 private:
  const Workspace& ws_;
  std::unique_ptr<ChildProcess> guard_;
  pid_t command_ = -1;
};

BOOST_AUTO_TEST_CASE(GuardContinuesWhenItsStoppedCommandIsContinuedAndEndsWithIt) {
  Workspace ws;
  StoppableRun run(ws);
  run.StopCommand();
  BOOST_REQUIRE_EQUAL(kill(run.command(), SIGCONT), 0);
  BOOST_TEST(WaitUntil([&] { return !IsStopped(ProcessState(run.guard())); }),
             "guard stayed stopped after its command was continued");
  WriteFile(run.go(), "");
  ProcessResult r = run.Wait();
  BOOST_TEST(!r.timed_out, "guard never ended: " << DescribeResult(r));
  BOOST_TEST(r.exit_code == 5, DescribeResult(r));
  BOOST_TEST(ws.Read("marker") == "done\n");
}

BOOST_AUTO_TEST_CASE(GuardEndsWithItsCommandKilledWhileStopped) {
  Workspace ws;
  StoppableRun run(ws);
  run.StopCommand();
  BOOST_REQUIRE_EQUAL(kill(run.command(), SIGKILL), 0);
  ProcessResult r = run.Wait();
  BOOST_TEST(!r.timed_out, "guard stayed stopped after its command ended: " << DescribeResult(r));
  BOOST_TEST(r.exit_code == 128 + SIGKILL, DescribeResult(r));
}

BOOST_AUTO_TEST_CASE(GuardContinuedAloneContinuesItsCommand) {
  Workspace ws;
  StoppableRun run(ws);
  run.StopCommand();
  BOOST_REQUIRE_EQUAL(kill(run.guard(), SIGCONT), 0);
  BOOST_TEST(WaitUntil([&] { return !IsStopped(ProcessState(run.command())); }),
             "the command stayed stopped after guard was continued");
  WriteFile(run.go(), "");
  ProcessResult r = run.Wait();
  BOOST_TEST(!r.timed_out, DescribeResult(r));
  BOOST_TEST(r.exit_code == 5, DescribeResult(r));
}

// A stopped process runs no signal handler, so guard's relay would wait for
// a SIGCONT that nobody sends: guard and its command must end all the same,
// and the session be sealed as killed by the signal.
BOOST_AUTO_TEST_CASE(SigtermToGuardWhileItsCommandIsStoppedEndsBothAndSealsTheSession) {
  Workspace ws;
  StoppableRun run(ws);
  run.StopCommand();
  BOOST_REQUIRE_EQUAL(kill(run.guard(), SIGTERM), 0);
  ProcessResult r = run.Wait();
  BOOST_TEST(!r.timed_out, "guard stayed stopped after SIGTERM: " << DescribeResult(r));
  BOOST_TEST(r.exit_code == 128 + SIGTERM, DescribeResult(r));
  BOOST_TEST(WaitUntil([&] { return ProcessState(run.command()) == '\0' || ProcessState(run.command()) == 'Z'; }),
             "the command outlived guard");
  std::vector<std::string> after = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(after.size(), 1u);
  BOOST_REQUIRE(WaitForDeferredSeals(ws));  // sealed after guard returned
  SessionMeta meta;
  BOOST_REQUIRE(LoadSessionMeta(ws.home() + "/sessions/" + after[0] + "/meta.json", &meta).ok());
  BOOST_TEST(SessionStateName(meta.state) == std::string("killed"));
  BOOST_TEST(meta.signal == SIGTERM);
  BOOST_TEST(!ws.Exists("marker"));
}

}  // namespace
}  // namespace guard::e2e
