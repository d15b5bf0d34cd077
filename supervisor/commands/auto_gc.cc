#include "supervisor/commands/auto_gc.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/os_calls.h"

namespace guard {
namespace {

// A gc started less than this ago (by this or another session's end) is
// recent enough: the store cannot have grown much past the policy since.
constexpr time_t kMinIntervalSeconds = 60;

[[noreturn]] void ExecGc(const char* self) {
  ::setsid();  // no terminal: a hangup of the user's shell does not reach it
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    if (null > 2) ::close(null);
  }
  // Nothing of the session's (the front's pipe, the journal) stays open.
  os::CloseFrom(3);
  (void)::setpriority(PRIO_PROCESS, 0, 10);
  const char* argv[] = {"guard", "gc", "--auto", nullptr};
  ::execv(self, const_cast<char* const*>(argv));
  ::_exit(127);
}

}  // namespace

long StartAutomaticGc(const std::string& state_path) {
  auto start = std::chrono::steady_clock::now();
  struct stat st;
  if (::stat((state_path + "/gc.log").c_str(), &st) == 0 && ::time(nullptr) - st.st_mtime < kMinIntervalSeconds) {
    return 0;
  }
  // Touched now, so that sessions ending together start one gc, not many.
  int fd = ::open((state_path + "/gc.log").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) {
    (void)::futimens(fd, nullptr);
    ::close(fd);
  }
  // Two forks: the middle child exits at once, so the gc is nobody's child
  // here (init reaps it) and the supervisor never waits for it.
  const std::string self = os::SelfExePath();
  if (self.empty()) return 0;
  pid_t middle = ::fork();
  if (middle < 0) return 0;
  if (middle == 0) {
    if (::fork() == 0) ExecGc(self.c_str());
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace guard
