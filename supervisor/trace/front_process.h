// The front process: what the shell waits for, split from the tracer so that
// `guard -- CMD` returns when CMD does even if CMD left background processes
// (a dev server, a file watcher) that guard goes on capturing.
//
// `guard -- CMD` forks before it starts anything else. The child, the back,
// is the supervisor: it makes the session, traces CMD and every process it
// starts, and seals the session when the last of them ends. The parent, the
// front, only waits for what the back tells it over a pipe:
//   - which session it recorded and which process the command is, so that
//     the front can relay signals sent to it alone (`kill PID`) to the
//     command, as guard always did (supervisor/signal_relay.h);
//   - that the command stopped (Ctrl-Z, SIGSTOP): the front stops with the
//     same signal (SIGTSTP for SIGSTOP, which the front cannot hold back:
//     see FollowStop in front_process.cc), so the shell sees the job stop;
//   - that the command continued (fg, or SIGCONT from anyone): the back
//     continues the front too, as it does when the command ends, whatever
//     state the front is in, so that a script's `wait` returns;
//   - that a signal guard would relay (SIGTERM...) waits on the stopped
//     front: a stopped process runs no handler, so the back, which watches
//     the front while the command is stopped, wakes it; the front relays the
//     signal and continues the command so that it can act on it, as a
//     shell's `kill %job` does;
//   - that the command's first process ended, with its exit status: the
//     front exits with it. If processes of the session still run, the back
//     goes on capturing them in the background and seals the session when
//     they end; `guard status` shows it running meanwhile. If none do, the
//     back says so once the session's last records are written, and seals
//     the session after the front has gone (the deferred seal,
//     supervisor/session/deferred_seal.h): the front never waits for it.
// If the back dies without saying how the command ended, the front exits
// with the back's own status. The back has PR_SET_PDEATHSIG(SIGKILL) until
// it lets the front go, so a SIGKILL of the front (what a user or a test
// sees as "guard") kills the back, and the kernel then kills every traced
// process (PTRACE_O_EXITKILL): the agent never runs on unrecorded.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace guard {

// The back's side of the pipe.
class FrontLink {
 public:
  // `front`: the front's pid (the back's parent).
  FrontLink(int fd, pid_t front) : fd_(fd), front_(front) {}
  ~FrontLink() { EndStopWatch(); }
  FrontLink(const FrontLink&) = delete;
  FrontLink& operator=(const FrontLink&) = delete;

  void SessionCreated(const std::string& id);
  void CommandStarted(pid_t command_pid, pid_t tracer_tid);
  // The command's first process entered a group-stop, and left it. Called on
  // the tracer's thread; between the two a thread of the back watches the
  // front for signals it cannot take while stopped.
  void CommandStopped(int sig);
  void CommandContinued();
  // The command's first process ended with exit status `code` (128+N for
  // signal N); `background` processes of the session still run. The front
  // exits; from now on the back outlives it.
  void CommandEnded(int code, size_t background);
  bool released() const { return released_; }
  // Whether there is a front to speak to (none when guard runs as one
  // process: as PID 1, or when the pipe could not be made).
  bool active() const { return fd_ >= 0; }

 private:
  void Send(char kind, int a, int b, const std::string& text = "");
  void WakeFront();  // SIGCONT, sent only after the message that explains it
  void WatchStoppedFront();
  void EndStopWatch();

  int fd_;
  pid_t front_;
  bool released_ = false;
  std::thread watch_;
  std::mutex mu_;
  std::condition_variable watch_cv_;
  bool watching_ = false;  // guarded by mu_
};

struct FrontResult {
  int code = 0;
  std::string session_id;  // "" if the back made none
};

// Forks. In the back, runs `back` and exits the process with what it returns
// (never returns). In the front, waits as described above and returns.
// `quiet`: the front prints nothing of its own.
// As PID 1 (a container's entrypoint) guard does not fork: the exit of PID 1
// would kill every process of its namespace, the supervisor and the
// background processes included. It then runs `back` itself, with an
// inactive link, and waits for every process of the session, as before.

FrontResult RunWithFront(bool quiet, const std::function<int(FrontLink*)>& back);

}  // namespace guard
