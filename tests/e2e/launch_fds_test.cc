// The fds the command inherits (docs/capture.md): exactly those guard was
// given, none of guard's own. guard holds its session log, journal, store
// and pipes open while it launches the command; each is close-on-exec, so
// that the agent can neither see them nor write into them (a forged line in
// guard.log, a record appended to the journal).
#define BOOST_TEST_MODULE launch_fds
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

// The test process's own fds above 2 (Boost.Test's, ctest's) are none of
// the command's business: marked close-on-exec, so that guard is given
// exactly 0, 1 and 2 plus what a test case opens on purpose.
struct OnlyStandardFdsInherited {
  OnlyStandardFdsInherited() {
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      int fd = std::stoi(e.path().filename().string());
      if (fd > 2) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    }
  }
};
BOOST_GLOBAL_FIXTURE(OnlyStandardFdsInherited);

GuardResult RunOpenFds(const Workspace& ws, const std::vector<std::string>& write_to) {
  GuardRun run;
  run.command = {TestProgram("open_fds")};
  run.command.insert(run.command.end(), write_to.begin(), write_to.end());
  return RunGuard(ws, run);
}

// open_fds's output without the line of the one fd guard passes on purpose
// under auto (the inbox, an O_PATH directory: nothing is written through it).
std::string WithoutInboxLine(const std::string& out) {
  const size_t at = out.find("inbox fd: ");
  if (at == std::string::npos) return out;
  const size_t end = out.find('\n', at);
  return out.substr(0, at) + (end == std::string::npos ? "" : out.substr(end + 1));
}

std::string GuardLog(const Workspace& ws, const std::string& id) {
  return ReadFile(ws.home() + "/sessions/" + id + "/guard.log");
}

BOOST_AUTO_TEST_CASE(CommandSeesExactlyStdinStdoutAndStderr) {
  Workspace ws;
  GuardResult r = RunOpenFds(ws, {"3"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(WithoutInboxLine(r.out) == "open: 0 1 2\nwrite 3: EBADF\n", DescribeResult(r));
  OnlyNewSession(ws, r);  // one session, its journal intact
  BOOST_TEST(!Contains(GuardLog(ws, r.new_sessions[0]), "written by the command"));
}

BOOST_AUTO_TEST_CASE(CommandCannotForgeALineInGuardsLog) {
  Workspace ws;
  GuardRun run;
  run.command = {"sh", "-c", "echo forged >&3"};
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code != 0, "the write to fd 3 succeeded: " << DescribeResult(r));
  BOOST_TEST(Contains(r.err, "Bad file descriptor"), DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  BOOST_TEST(!Contains(GuardLog(ws, r.new_sessions[0]), "forged"));
}

BOOST_AUTO_TEST_CASE(AnFdTheUserPassesOnPurposeStaysOpenAndWritable) {
  Workspace ws;
  // As `exec 5>x; guard -- CMD` would: fd 5, not close-on-exec.
  std::string x = ws.outside() + "/x";
  int fd = open(x.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  BOOST_REQUIRE(fd >= 0);
  if (fd != 5) {
    BOOST_REQUIRE(dup2(fd, 5) == 5);
    close(fd);
  }
  GuardResult r = RunOpenFds(ws, {"5", "3"});
  close(5);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(WithoutInboxLine(r.out) == "open: 0 1 2 5\nwrite 5: ok\nwrite 3: EBADF\n", DescribeResult(r));
  BOOST_TEST(ReadFile(x) == "written by the command\n");
}

}  // namespace
}  // namespace guard::e2e
