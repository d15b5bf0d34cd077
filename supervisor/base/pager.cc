#include "supervisor/base/pager.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "common/os_calls.h"

namespace guard {

namespace {

const char* NonEmptyEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

}  // namespace

std::string Pager::Command() {
  // GUARD_PAGER set but empty means "no pager", as GIT_PAGER="" does.
  const char* guard_pager = std::getenv("GUARD_PAGER");
  std::string cmd;
  if (guard_pager != nullptr)
    cmd = guard_pager;
  else if (const char* pager = NonEmptyEnv("PAGER"))
    cmd = pager;
  else
    cmd = "less -FRX";
  if (cmd == "cat") return "";
  return cmd;
}

bool Pager::Start(bool enabled) {
  if (!enabled || pid_ > 0) return false;
  if (::isatty(STDOUT_FILENO) != 1) return false;
  std::string cmd = Command();
  if (cmd.empty()) return false;
  int fds[2];
  if (os::PipeCloexec(fds) != 0) return false;
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::dup2(fds[0], STDIN_FILENO);  // dup2 clears close-on-exec on the copy
    // less reads LESS when it starts: git's default, unless the user has one.
    ::setenv("LESS", std::getenv("LESS") != nullptr ? std::getenv("LESS") : "FRX", 1);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "guard: cannot run the pager '%s'\n", cmd.c_str());
    ::_exit(127);
  }
  ::close(fds[0]);
  saved_stdout_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  ::dup2(fds[1], STDOUT_FILENO);
  ::close(fds[1]);
  // A pager that quits early closes the pipe: writes then fail with EPIPE
  // instead of killing guard.
  ::signal(SIGPIPE, SIG_IGN);
  pid_ = pid;
  return true;
}

void Pager::Finish() {
  if (pid_ <= 0) return;
  std::fflush(stdout);
  std::clearerr(stdout);  // EPIPE after the pager quit is not an error
  // Closing the pipe's write end is the pager's end of file; stdout goes
  // back to the terminal for anything printed after.
  if (saved_stdout_ >= 0) {
    ::dup2(saved_stdout_, STDOUT_FILENO);
    ::close(saved_stdout_);
    saved_stdout_ = -1;
  } else {
    ::close(STDOUT_FILENO);
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  ::signal(SIGPIPE, SIG_DFL);
}

}  // namespace guard
