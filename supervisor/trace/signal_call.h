// A call that could stop or kill guard itself, stopped by the filter
// (seccomp_filter.h): kill, tkill, tgkill, rt_sigqueueinfo,
// rt_tgsigqueueinfo and pidfd_send_signal sending SIGKILL or SIGSTOP (the
// signals no process can catch or ignore; guard takes every other one
// harmlessly, signal_relay.h), and prlimit64 setting another process's
// limits (a lower RLIMIT_CPU kills, a lower RLIMIT_FSIZE fails writes).
//
// The tracer decides at the stop, with the pids of that moment, whom the
// call reaches:
//   - a process or thread of guard's own (the supervisor and its threads,
//     the front process, a helper child of the supervisor that is not
//     traced): refused with EPERM, as the kernel refuses a process it may
//     not signal;
//   - a process group with guard in it (kill(0, ...) or kill(-pgid, ...):
//     the command runs in guard's group, the job's, so `kill -STOP 0` in a
//     script is one): the signal goes to every member but guard, sent by
//     the tracer itself, and the call returns what kill would;
//   - every process (kill(-1, ...)): refused with EPERM, since the tracer
//     cannot know which processes the caller may signal (a user namespace's
//     root may not signal what guard may);
//   - anything else runs as it is.
// The group's members are read from /proc (GroupOf of every process), in
// passes until one finds nobody new: what is not atomic is a process that
// joins the group between two passes and after the last.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace guard {

// What the decision reads of the system; tests give fakes.
class ProcessFacts {
 public:
  virtual ~ProcessFacts() = default;
  // The thread group (process) of thread `tid`, or -1 when there is none.
  virtual pid_t ThreadGroupOf(pid_t tid) = 0;
  // The process group of process `pid`, or -1.
  virtual pid_t GroupOf(pid_t pid) = 0;
  // The process the pidfd `fd` of thread `tid` refers to, or -1 (not a
  // pidfd, or its process is gone).
  virtual pid_t PidfdTarget(pid_t tid, int fd) = 0;
  // Whether process `tgid` is guard's own.
  virtual bool IsGuards(pid_t tgid) = 0;
  // Every process whose process group is `pgid`.
  virtual std::vector<pid_t> GroupMembers(pid_t pgid) = 0;
  // kill(pid, sig): 0 or an errno value.
  virtual int Send(pid_t pid, int sig) = 0;
};

enum class SignalVerdict {
  kRun,            // guard is not reached: the call runs
  kRefuse,         // guard is reached: the call fails with EPERM
  kGroupButGuard,  // a group with guard in it: the tracer signals the others
};

struct SignalDecision {
  SignalVerdict verdict = SignalVerdict::kRun;
  pid_t group = 0;  // kGroupButGuard: the process group
  int sig = 0;      // kGroupButGuard: the signal
};

// Whether the filter stops syscall `nr` for this decision.
bool IsGuardReachingCall(long nr);

// The decision for `caller_tid`'s call `nr` with `args`.
SignalDecision DecideSignalCall(long nr, const uint64_t args[6], pid_t caller_tid, ProcessFacts& facts);

// Sends `sig` to every member of `group` but guard's processes, as
// kill(-group, sig) would: 0 when at least one was signalled, else the
// errno of the last failure (EPERM when only guard was there).
int SignalGroupButGuard(pid_t group, int sig, ProcessFacts& facts);

// The facts of this machine, for the tracer: guard's own processes are this
// process, `front` while it is this process's parent (front_process.h), and
// this process's children that `traced` does not name (helpers).
class LiveProcessFacts : public ProcessFacts {
 public:
  LiveProcessFacts(pid_t front, std::function<bool(pid_t)> traced)
      : front_(front), traced_(std::move(traced)) {}
  pid_t ThreadGroupOf(pid_t tid) override;
  pid_t GroupOf(pid_t pid) override;
  pid_t PidfdTarget(pid_t tid, int fd) override;
  bool IsGuards(pid_t tgid) override;
  std::vector<pid_t> GroupMembers(pid_t pgid) override;
  int Send(pid_t pid, int sig) override;

 private:
  pid_t front_;
  std::function<bool(pid_t)> traced_;
};

}  // namespace guard
