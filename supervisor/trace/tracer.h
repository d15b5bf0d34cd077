// Tracer: follows the command and every process and thread it starts
// (PTRACE_SEIZE with fork, vfork, clone and exec following), hands each
// syscall stopped by the seccomp filter, decoded and resolved, to a
// MutationSink (capture) before it runs, and its result after it returns. Signals are delivered unchanged; a
// group-stop (Ctrl-Z) of the command stops guard too, so the shell sees the
// job stop, and `fg` resumes both. No process of the session may stop or
// kill guard itself (signal_call.h).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "common/status.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/trace/child_launch.h"
#include "supervisor/trace/path_resolver.h"
#include "supervisor/trace/settle_nudge.h"
#include "supervisor/trace/shim_hello.h"
#include "supervisor/trace/test_fault.h"
#include "supervisor/trace/tracee_views.h"
#include "supervisor/trace/tree_anchors.h"

namespace guard {

class Tracer {
 public:
  Tracer(MutationSink* sink, std::shared_ptr<spdlog::logger> log);

  // Traces until every tracee has exited. *main_status receives the wait
  // status of the command's first process.
  Status Run(TracedChild* child, int* main_status);

  // Called when the command's first process enters a group-stop (Ctrl-Z);
  // unset, guard itself stops like it (StopLike).
  std::function<void(int sig)> on_stop;
  // Called when that process leaves the group-stop (SIGCONT, from anyone).
  std::function<void()> on_continue;
  // Called when the command's first process has ended and, a short grace
  // later, `remaining` other traced processes still run (never when none do:
  // then Run returns).
  std::function<void(int status, size_t remaining)> on_main_end;

  // The directories a tracee may reach by other names (the root, the state
  // directory): paths that reach them are named below them (tree_anchors.h).
  void RecognizeTrees(const std::vector<std::string>& dirs) {
    for (const std::string& d : dirs) anchors_.Add(d);
  }

  // The truth the shim's handshake is held to (shim_hello.h). Unset: the
  // session has no shim, and every hello is refused.
  void ExpectShim(ShimTruth truth) { shim_truth_ = std::move(truth); }
  // The session's processes have a /dev/shm of their own (path_resolver.h).
  void SessionHasPrivateShm() { resolve_.private_shm = true; }

  // Stops for calls; the shims' handshakes (one a process image under the
  // shim) are counted apart.
  uint64_t seccomp_stops() const { return seccomp_stops_ - shim_hellos_; }
  uint64_t shim_hellos() const { return shim_hellos_; }
  uint64_t shim_hellos_refused() const { return shim_hellos_refused_; }
  // guard's front process (front_process.h), 0 when there is none: no
  // process of the session may stop or kill it, as for this one.
  pid_t front = 0;

  uint64_t exit_stops() const { return exit_stops_; }

 private:
  struct Tracee {
    bool watching = false;  // stopped at a seccomp stop whose exit we wait for
    bool settling = false;  // let run past a seccomp stop without an exit stop (Settle)
    bool starting = false;  // the command's own SIGSTOP before exec, not job control
    bool stopped = false;   // in a group-stop reported to on_stop
  };
  // `tid` stopped, or exited by itself, after a call let run with
  // settle_later: tells the sink it has returned. False when the test-only
  // kill point killed the thread instead (it then dies inside the call).
  bool Settle(pid_t tid, Tracee* t);
  void OnSeccompStop(pid_t tid, Tracee* t);
  void OnSyscallExit(pid_t tid, Tracee* t);
  // A signal call sending SIGKILL or SIGSTOP, or prlimit64 of another
  // process: refused, or sent to a group but guard (signal_call.h).
  void OnGuardReachingCall(pid_t tid, long nr, const uint64_t args[6]);
  void OnGroupStop(pid_t tid, Tracee* t, int sig);
  // A signal about to be delivered (signal-delivery-stop): one that will
  // dump a core into a file is captured first (core_dump.h).
  void OnSignalDelivery(pid_t tid, Tracee* t, int sig);
  void Resume(pid_t tid, int sig);
  // The sink has been told that the call of `tid` ended (After, Returned,
  // Abandon): hands it again the calls held for it (Verdict::wait_for).
  void CallEnded(pid_t tid);

  MutationSink* sink_;
  std::shared_ptr<spdlog::logger> log_;
  std::unordered_map<pid_t, Tracee> tracees_;
  // Threads held at their seccomp stop, by the thread whose call they wait
  // for (Verdict::wait_for).
  std::unordered_map<pid_t, std::vector<pid_t>> held_;
  // Threads held at their seccomp stop to be handed back shortly
  // (Verdict::retry_later), since when, and when they last were.
  std::vector<pid_t> retry_;
  std::unordered_map<pid_t, int64_t> retry_since_ns_;
  int64_t last_retry_ns_ = 0;
  // Hands the retry_ threads to the sink again.
  void RetryHeld();
  // Moves to retry_ the threads held_ longer than kHoldLimitNs.
  void ExpireHolds();
  int64_t last_expiry_ns_ = 0;
  // `tid` is gone: it is held for nothing any more.
  void ForgetHeld(pid_t tid);
  pid_t main_pid_ = -1;
  uint64_t seccomp_stops_ = 0;
  uint64_t exit_stops_ = 0;
  std::optional<ShimTruth> shim_truth_;
  uint64_t shim_hellos_ = 0;
  uint64_t shim_hellos_refused_ = 0;
  // Answers a shim's handshake (shim_hello.h).
  void OnShimHello(pid_t tid, const uint64_t args[6]);
  TreeAnchors anchors_;
  TraceeViews views_;
  ResolveContext resolve_{&anchors_, &views_};
  // Stops a thread that leaves a one-stop call unsettled for this long.
  SettleNudge nudge_{std::chrono::milliseconds(100)};
  DecodeFault decode_fault_;  // test only (test_fault.h)
};

}  // namespace guard
