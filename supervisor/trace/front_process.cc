#include "supervisor/trace/front_process.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/trace/signal_relay.h"

namespace guard {
namespace {

// One message, written whole (smaller than PIPE_BUF, so never interleaved
// or split).
struct Message {
  char kind;  // 'I' session id, 'P' command started, 'S' stopped, 'X' ended
  int32_t a;
  int32_t b;
  char text[64];
};
static_assert(sizeof(Message) <= PIPE_BUF);

int StatusToCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 125;
}

}  // namespace

void FrontLink::Send(char kind, int a, int b, const std::string& text) {
  if (released_ || fd_ < 0) return;
  Message m = {};
  m.kind = kind;
  m.a = a;
  m.b = b;
  std::strncpy(m.text, text.c_str(), sizeof m.text - 1);
  // A front that is gone (EPIPE; SIGPIPE is ignored) needs no message.
  (void)WriteAll(fd_, &m, sizeof m, "front pipe");
}

void FrontLink::SessionCreated(const std::string& id) { Send('I', 0, 0, id); }
void FrontLink::CommandStarted(pid_t command_pid, pid_t tracer_tid) { Send('P', command_pid, tracer_tid); }
void FrontLink::CommandStopped(int sig) { Send('S', sig, 0); }

void FrontLink::CommandEnded(int code, size_t background) {
  if (released_ || fd_ < 0) return;
  // From here the back must outlive the front.
  prctl(PR_SET_PDEATHSIG, 0);
  Send('X', code, static_cast<int>(background));
  released_ = true;
  close(fd_);
  // Nor may the back hold the terminal or the pipes the front was given
  // (`out=$(guard -- CMD)` would wait for the session's end): from now on it
  // speaks only to the session's log.
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    close(null);
  }
}

FrontResult RunWithFront(bool quiet, const std::function<int(FrontLink*)>& back) {
  FrontResult result;
  // A closed standard fd would be reused by the pipe, and the back's stderr
  // would then write into it: give each one /dev/null first.
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      int null = open("/dev/null", O_RDWR);  // lowest free fd: this one
      if (null >= 0 && null != fd) close(null);
    }
  }
  int fds[2];
  bool one_process = getpid() == 1;
  if (!one_process && pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "guard: warning: pipe: %s; running without a front process\n", std::strerror(errno));
    one_process = true;
  }
  if (one_process) {
    FrontLink none(-1);
    result.code = back(&none);
    return result;
  }
  std::fflush(nullptr);
  pid_t front = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "guard: fork: %s\n", std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    result.code = 125;
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != front) _exit(125);  // the front died before the line above
    signal(SIGPIPE, SIG_IGN);
    FrontLink link(fds[1]);
    int code = back(&link);
    link.CommandEnded(code, 0);  // no-op if already said
    std::fflush(nullptr);
    _exit(code);
  }

  close(fds[1]);
  UniqueFd in(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    Message m;
    size_t got = 0;
    Status s = ReadFull(in.get(), &m, sizeof m, &got, "front pipe");
    if (!s.ok() || got != sizeof m) break;  // the back is gone
    switch (m.kind) {
      case 'I':
        m.text[sizeof m.text - 1] = '\0';
        result.session_id = m.text;
        break;
      case 'P':
        InstallSignalRelay(static_cast<pid_t>(m.a), static_cast<pid_t>(m.b));
        break;
      case 'S':
        StopLike(m.a);
        break;
      case 'X':
        if (m.b > 0 && !quiet) {
          std::fprintf(stderr,
                       "guard: %d background process%s of session %s still run%s; guard goes on recording "
                       "until they end (guard status shows the session)\n",
                       m.b, m.b == 1 ? "" : "es", result.session_id.c_str(), m.b == 1 ? "s" : "");
        }
        result.code = m.a;
        if (m.b == 0) {
          int status = 0;
          while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
          }
        }
        return result;
      default:
        break;
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.code = StatusToCode(status);
  return result;
}

}  // namespace guard
