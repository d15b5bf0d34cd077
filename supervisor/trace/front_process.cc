#include "supervisor/trace/front_process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/trace/signal_relay.h"

namespace guard {
namespace {

// One message, written whole (smaller than PIPE_BUF, so never interleaved
// or split).
struct Message {
  // 'I' session id, 'P' command started, 'S' stopped, 'C' continued,
  // 'W' woken for a pending signal, 'X' ended
  char kind;
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

// How often the back looks at a stopped front for a signal waiting on it.
constexpr auto kStoppedFrontPoll = std::chrono::milliseconds(50);

// Whether process `pid` is stopped with a signal that guard relays pending
// (/proc/PID/status: "State:\tT", and the bits of SigPnd or ShdPnd).
bool StoppedWithRelayedSignal(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  bool stopped = false;
  unsigned long long pending = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("State:", 0) == 0) {
      size_t at = line.find_first_not_of(" \t", 6);
      stopped = at != std::string::npos && line[at] == 'T';
    }
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
      pending |= std::strtoull(line.c_str() + 7, nullptr, 16);
    }
  }
  if (!stopped) return false;
  sigset_t relayed = RelayedSignals();
  for (int sig = 1; sig < 64; ++sig) {
    if ((pending >> (sig - 1) & 1) != 0 && sigismember(&relayed, sig) == 1) return true;
  }
  return false;
}

// The front's side.

volatile sig_atomic_t g_continued = 0;  // SIGCONTs the front received in FollowStop
void CountContinue(int) { g_continued = g_continued + 1; }

bool Readable(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;  // a message, or the back gone (POLLHUP)
}

// The command stopped with `sig`: stops the front with it, until a SIGCONT.
// Returns whether the front was continued by another than the back (`fg`,
// `kill -CONT`): the command must then be continued too.
//
// The back continues the front after it has written the message that says
// why ('C', 'W', 'X'), and the front may read 'S' long after the command
// went on. A stop the front sends itself after that SIGCONT would last for
// ever, so the stop is made pending while blocked first: a SIGCONT from then
// on discards it (the kernel drops pending stop signals at every SIGCONT),
// and one sent before comes after its message, which the front then finds
// in the pipe and takes as "do not stop". SIGSTOP cannot be blocked: the
// front stops with SIGTSTP instead, which shells report alike.
bool FollowStop(int sig, int pipe) {
  int stop = sig == SIGSTOP ? SIGTSTP : sig;
  sigset_t only, old;
  sigemptyset(&only);
  sigaddset(&only, stop);
  sigprocmask(SIG_BLOCK, &only, &old);
  struct sigaction dfl = {}, prev = {}, count = {}, prev_cont = {};
  dfl.sa_handler = SIG_DFL;
  sigaction(stop, &dfl, &prev);
  count.sa_handler = CountContinue;
  count.sa_flags = SA_RESTART;
  sigaction(SIGCONT, &count, &prev_cont);
  g_continued = 0;
  raise(stop);
  bool superseded = Readable(pipe);
  if (superseded) {
    struct sigaction ign = {};
    ign.sa_handler = SIG_IGN;
    sigaction(stop, &ign, nullptr);  // discards the pending stop
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);  // the front stops here
  sigaction(stop, &prev, nullptr);
  sigaction(SIGCONT, &prev_cont, nullptr);
  // Not continued at all: the stop was dropped (an orphaned process group
  // takes no terminal stop), or a SIGCONT came first. A continue from the
  // back comes after its message.
  return !superseded && g_continued != 0 && !Readable(pipe);
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

void FrontLink::WakeFront() {
  if (!released_ && fd_ >= 0 && getppid() == front_) kill(front_, SIGCONT);
}

void FrontLink::SessionCreated(const std::string& id) { Send('I', 0, 0, id); }
void FrontLink::CommandStarted(pid_t command_pid, pid_t tracer_tid) { Send('P', command_pid, tracer_tid); }

void FrontLink::CommandStopped(int sig) {
  Send('S', sig, 0);
  if (released_ || fd_ < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (watching_) return;  // stopped again while stopped
  watching_ = true;
  watch_ = std::thread([this] { WatchStoppedFront(); });
}

void FrontLink::CommandContinued() {
  EndStopWatch();
  Send('C', 0, 0);
  WakeFront();
}

void FrontLink::WatchStoppedFront() {
  std::unique_lock<std::mutex> lock(mu_);
  while (watching_) {
    watch_cv_.wait_for(lock, kStoppedFrontPoll);
    if (!watching_ || getppid() != front_) break;
    if (StoppedWithRelayedSignal(front_)) {
      Send('W', 0, 0);
      kill(front_, SIGCONT);
    }
  }
}

void FrontLink::EndStopWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    watching_ = false;
  }
  watch_cv_.notify_all();
  if (watch_.joinable()) watch_.join();
}

void FrontLink::CommandEnded(int code, size_t background) {
  if (released_ || fd_ < 0) return;
  EndStopWatch();
  // From here the back must outlive the front.
  prctl(PR_SET_PDEATHSIG, 0);
  Send('X', code, static_cast<int>(background));
  // The front may be stopped (with the command, or by anyone): it must go
  // on to read 'X' and exit.
  WakeFront();
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
    FrontLink none(-1, 0);
    result.code = back(&none);
    return result;
  }
  std::fflush(nullptr);
  pid_t front = getpid();
  // The signals the front relays wait, blocked, until it knows the command
  // ('P'): a command that signals its group at once (kill(0, SIGTERM)) may
  // do so before the front has read which process it is, and would kill a
  // front that still had the default action. Then they are delivered, each
  // with its sender, to the relay. The back runs with the mask it had.
  sigset_t relayed = RelayedSignals(), unblocked;
  sigprocmask(SIG_BLOCK, &relayed, &unblocked);
  pid_t pid = fork();
  if (pid == 0) sigprocmask(SIG_SETMASK, &unblocked, nullptr);
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &unblocked, nullptr);
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
    FrontLink link(fds[1], front);
    int code = back(&link);
    link.CommandEnded(code, 0);  // no-op if already said
    std::fflush(nullptr);
    _exit(code);
  }

  close(fds[1]);
  UniqueFd in(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  // Before the command can run: a signal guard has no use for, sent to the
  // job's group, must not end the front (signal_relay.h).
  ShrugSignalsFromOthers();
  int stopped_with = 0;  // the command's stop signal while it is stopped
  unsigned relayed_mark = 0;
  // TEST ONLY: GUARD_TEST_FRONT_SLOW_MS=<ms> makes the front that long in
  // taking the command's pid, as a loaded machine may (guard_command_test:
  // a command that signals its group at once).
  long slow_ms = 0;
  if (const char* slow = std::getenv("GUARD_TEST_FRONT_SLOW_MS"); slow != nullptr) slow_ms = std::atol(slow);
  auto follow_stop = [&] {
    relayed_mark = RelayedCount();
    if (FollowStop(stopped_with, in.get())) ContinueCommand();
  };
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
        if (slow_ms > 0) usleep(static_cast<useconds_t>(slow_ms) * 1000);  // TEST ONLY, below
        InstallSignalRelay(static_cast<pid_t>(m.a), static_cast<pid_t>(m.b));
        sigprocmask(SIG_SETMASK, &unblocked, nullptr);  // what waited runs the relay now
        break;
      case 'S':
        stopped_with = m.a;
        follow_stop();
        break;
      case 'W':
        // The back woke the front for a signal that waited on it, now run
        // by its handler. Passed on, the command must run to act on it;
        // one the command had already had (kill(0, ...)) changes nothing.
        if (RelayedCount() != relayed_mark) {
          relayed_mark = RelayedCount();
          ContinueCommand();
        } else if (stopped_with != 0) {
          follow_stop();
        }
        break;
      case 'C':
        stopped_with = 0;
        break;
      case 'X':
        if (m.b > 0 && !quiet) {
          std::fprintf(stderr,
                       "guard: %d background process%s of session %s still run%s; guard goes on recording "
                       "until they end (guard status shows the session)\n",
                       m.b, m.b == 1 ? "" : "es", result.session_id.c_str(), m.b == 1 ? "s" : "");
        }
        // Not waited for: the back seals the session after (the deferred
        // seal, supervisor/session/deferred_seal.h), and the next guard
        // command waits for that seal or completes it.
        result.code = m.a;
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
