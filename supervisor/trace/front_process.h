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
//     same signal, so the shell sees the job stop;
//   - that the command's first process ended, with its exit status: the
//     front exits with it. If processes of the session still run, the back
//     goes on capturing them in the background and seals the session when
//     they end; `guard status` shows it running meanwhile.
// If the back dies without saying how the command ended, the front exits
// with the back's own status. The back has PR_SET_PDEATHSIG(SIGKILL) until
// it lets the front go, so a SIGKILL of the front (what a user or a test
// sees as "guard") kills the back, and the kernel then kills every traced
// process (PTRACE_O_EXITKILL): the agent never runs on unrecorded.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace guard {

// The back's side of the pipe.
class FrontLink {
 public:
  explicit FrontLink(int fd) : fd_(fd) {}
  void SessionCreated(const std::string& id);
  void CommandStarted(pid_t command_pid, pid_t tracer_tid);
  void CommandStopped(int sig);
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
  int fd_;
  bool released_ = false;
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
