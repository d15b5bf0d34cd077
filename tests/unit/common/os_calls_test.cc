#define BOOST_TEST_MODULE os_calls
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "common/os_calls.h"
#include "common/session_meta.h"
#include "tests/unit/support/temp_dir.h"

// The Linux twins of common/os_calls.h, as the shared code relies on them
// (the macOS twins are built by tools/macos/build.sh, never run here).

namespace guard {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

BOOST_AUTO_TEST_CASE(RenameNoReplaceRefusesATakenNameAndMovesToAFreeOne) {
  testing::TempDir dir;
  std::ofstream(dir.File("a")) << "a";
  std::ofstream(dir.File("b")) << "b";
  BOOST_TEST(os::RenameNoReplace(AT_FDCWD, dir.File("a").c_str(), AT_FDCWD, dir.File("b").c_str()) == -1);
  BOOST_TEST(errno == EEXIST);
  BOOST_TEST(Read(dir.File("b")) == "b");
  BOOST_TEST(os::RenameNoReplace(AT_FDCWD, dir.File("a").c_str(), AT_FDCWD, dir.File("c").c_str()) == 0);
  BOOST_TEST(Read(dir.File("c")) == "a");
  BOOST_TEST(::access(dir.File("a").c_str(), F_OK) != 0);
}

BOOST_AUTO_TEST_CASE(RandomFillsTheWholeBuffer) {
  unsigned char a[300] = {}, b[300] = {};
  BOOST_TEST(os::Random(a, sizeof a, /*nonblock=*/true) == static_cast<ssize_t>(sizeof a));
  BOOST_TEST(os::Random(b, sizeof b, /*nonblock=*/false) == static_cast<ssize_t>(sizeof b));
  BOOST_TEST(std::memcmp(a, b, sizeof a) != 0);
}

BOOST_AUTO_TEST_CASE(PipeCloexecIsCloseOnExecAtBothEnds) {
  int fds[2];
  BOOST_REQUIRE(os::PipeCloexec(fds) == 0);
  for (int fd : fds) BOOST_TEST((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
  BOOST_TEST(::write(fds[1], "x", 1) == 1);
  char c = 0;
  BOOST_TEST(::read(fds[0], &c, 1) == 1);
  BOOST_TEST(c == 'x');
  ::close(fds[0]);
  ::close(fds[1]);
}

BOOST_AUTO_TEST_CASE(ExecVpeRunsWithTheGivenEnvironment) {
  testing::TempDir dir;
  const std::string out = dir.File("out");
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    std::string script = "echo \"$GUARD_OS_CALLS_TEST\" > " + out;
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), script.data(), nullptr};
    char* envp[] = {const_cast<char*>("GUARD_OS_CALLS_TEST=given"), const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    os::ExecVpe("sh", argv, envp);
    ::_exit(127);
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0);
  BOOST_TEST(Read(out) == "given\n");
}

BOOST_AUTO_TEST_CASE(SyncsSucceedOnAnOrdinaryFile) {
  testing::TempDir dir;
  int fd = ::open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  BOOST_REQUIRE(fd >= 0);
  BOOST_TEST(::write(fd, "data", 4) == 4);
  BOOST_TEST(os::SyncData(fd) == 0);
  BOOST_TEST(os::SyncFileSystem(fd) == 0);
  ::close(fd);
}

BOOST_AUTO_TEST_CASE(OwnMountTellsAMountPointFromAPlainDirectory) {
  testing::TempDir dir;
  ::mkdir(dir.File("sub").c_str(), 0700);
  BOOST_TEST(!os::OwnMount(dir.File("sub").c_str(), dir.path.c_str()));
  BOOST_TEST(os::OwnMount("/proc", "/"));  // procfs: a mount of its own
  BOOST_TEST(!os::OwnMount(dir.File("absent").c_str(), dir.path.c_str()));
}

BOOST_AUTO_TEST_CASE(ProcessStartTicksAreStableAndZeroForTheGone) {
  const uint64_t mine = os::ProcessStartTicks(::getpid());
  BOOST_TEST(mine != 0u);
  BOOST_TEST(os::ProcessStartTicks(::getpid()) == mine);
  BOOST_TEST(ProcessStartTicks(::getpid()) == mine);
  pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_TEST(os::ProcessStartTicks(child) == 0u);  // reaped: gone
}

BOOST_AUTO_TEST_CASE(SelfExePathNamesThisProgram) {
  const std::string self = os::SelfExePath();
  BOOST_TEST(!self.empty());
  BOOST_TEST(self.find("os_calls_test") != std::string::npos, self);
}

}  // namespace
}  // namespace guard
