#include "supervisor/trace/tracer.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/clock.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/trace/mark_call.h"
#include "supervisor/trace/core_dump.h"
#include "supervisor/trace/mutation_resolver.h"
#include "supervisor/trace/seccomp_call.h"
#include "supervisor/trace/syscall_decoder.h"
#include "supervisor/trace/signal_call.h"
#include "supervisor/trace/signal_relay.h"
#include "supervisor/trace/syscall_regs.h"
#include "supervisor/trace/test_kill_point.h"

namespace guard {
namespace {

// How long after the command's first process ended guard waits for the exits
// already under way before it reports processes still running.
constexpr int64_t kMainEndGraceNs = 300 * 1000 * 1000;
// How often threads held with Verdict::retry_later are handed back.
constexpr int64_t kRetryEveryNs = 100 * 1000;

bool IsStopSignal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

}  // namespace

Tracer::Tracer(MutationSink* sink, std::shared_ptr<spdlog::logger> log)
    : sink_(sink), log_(std::move(log)), decode_fault_(DecodeFault::FromEnvironment()) {}

void Tracer::Resume(pid_t tid, int sig) {
  // ESRCH: the tracee was killed meanwhile; its exit is reported by waitpid.
  ptrace(PTRACE_CONT, tid, 0, sig);
}

bool Tracer::Settle(pid_t tid, Tracee* t) {
  if (!t->settling) return true;
  // Test-only (test_kill_point.h): the moment the call is known to have run,
  // before guard learns what it did.
  if (TestKillPointCallReturned(tid)) return false;
  t->settling = false;
  nudge_.Settled(tid);
  sink_->Returned(tid);
  CallEnded(tid);
  return true;
}

void Tracer::ForgetHeld(pid_t tid) {
  // Its id may be a new thread's by the time the holds end: that one is
  // not at the stop this one was held at.
  std::erase(retry_, tid);
  retry_since_ns_.erase(tid);
  for (auto& [other, held] : held_) std::erase(held, tid);
}

void Tracer::ExpireHolds() {
  const int64_t now = MonoNowNs();
  last_expiry_ns_ = now;
  for (auto& [other, held] : held_) {
    std::erase_if(held, [&](pid_t h) {
      auto since = retry_since_ns_.find(h);
      if (since == retry_since_ns_.end() || now - since->second < kHoldLimitNs) return false;
      log_->warn("tid {} held {} ms for the call of tid {} on the same name: let go", h, kHoldLimitNs / 1000000,
                 other);
      retry_.push_back(h);  // handed back at once, past the limit: Before no longer holds it
      return true;
    });
  }
  std::erase_if(held_, [](const auto& entry) { return entry.second.empty(); });
}

void Tracer::RetryHeld() {
  last_retry_ns_ = MonoNowNs();
  std::vector<pid_t> held = std::move(retry_);
  retry_.clear();
  for (pid_t h : held) {
    if (auto t = tracees_.find(h); t != tracees_.end()) {
      OnSeccompStop(h, &t->second);
    } else {
      retry_since_ns_.erase(h);  // died while held
    }
  }
}

void Tracer::CallEnded(pid_t tid) {
  auto it = held_.find(tid);
  if (it == held_.end()) return;
  std::vector<pid_t> held = std::move(it->second);
  held_.erase(it);
  for (pid_t h : held) {
    // Still at the seccomp stop it was held at, unless it died meanwhile.
    if (auto t = tracees_.find(h); t != tracees_.end()) OnSeccompStop(h, &t->second);
  }
}

void Tracer::OnShimHello(pid_t tid, const uint64_t args[6]) {
  ++shim_hellos_;
  SyscallRegs r;
  if (ptrace(PTRACE_GETREGS, tid, 0, &r.regs) != 0) return Resume(tid, 0);
  std::string why;
  AnswerShimHello(tid, args, shim_truth_ ? &*shim_truth_ : nullptr, &r, &why);
  if (!why.empty()) {
    // Its process's calls come here instead: slower, never unseen.
    ++shim_hellos_refused_;
    log_->warn("pid {}: its shim's environment is not the session's ({}): it captures nothing, the tracer does",
               tid, EscapeForTerminal(why));
  }
  ptrace(PTRACE_SETREGS, tid, 0, &r.regs);
  Resume(tid, 0);
}

void Tracer::OnSeccompStop(pid_t tid, Tracee* t) {
  ++seccomp_stops_;
  // The thread's previous call, let run without an exit stop, is over.
  if (!Settle(tid, t)) return Resume(tid, 0);
  // The number and arguments only: the registers are read and written back
  // only for a call guard answers or refuses (below).
  SeccompCall call;
  if (!ReadSeccompCall(tid, &call)) return Resume(tid, 0);
  const uint64_t* args = call.args;
  if (IsGuardReachingCall(call.nr)) return OnGuardReachingCall(tid, call.nr, args);
  SyscallRegs r;
  if (IsViewChange(call.nr)) {  // chroot, unshare...: changes no file (tracee_views.h)
    // A mount in the session's namespace makes its names differ from guard's.
    if (IsMountCall(call.nr)) ForgetSessionNamespace();
    views_.ChangeBegins(tid);
    return Resume(tid, 0);
  }
  if (IsMarkCall(call.nr, args)) {  // `guard mark`: answered here, never run (mark_call.h)
    if (ptrace(PTRACE_GETREGS, tid, 0, &r.regs) != 0) return Resume(tid, 0);
    AnswerMarkCall(tid, args, sink_, &r);
    ptrace(PTRACE_SETREGS, tid, 0, &r.regs);
    return Resume(tid, 0);
  }
  if (IsShimHello(call.nr, args)) return OnShimHello(tid, args);  // never run (shim_hello.h)
  MutationRequest req;
  Status decoded = DecodeMutation(tid, call.nr, args, &req);
  // A call the filter stops but that changes nothing (a read-only openat2)
  // runs; one whose arguments cannot be read goes to capture as a failure.
  if (decoded.code() == Status::Code::kUnsupported) return Resume(tid, 0);
  if (decoded.ok() && decode_fault_.Hits(req.syscall)) {
    decoded = Status::IOError(std::string(req.syscall) + ": injected decode failure (GUARD_TEST_FAULT)");
  }
  Mutation m;
  ResolveMutation(tid, req, decoded, &m, resolve_);
  m.holdable = true;
  auto since = retry_since_ns_.find(tid);
  if (since != retry_since_ns_.end()) m.held_ns = MonoNowNs() - since->second;
  Verdict v = sink_->Before(m);
  if (v.retry_later) {
    if (since == retry_since_ns_.end()) retry_since_ns_.emplace(tid, MonoNowNs());
    retry_.push_back(tid);  // stays stopped here (RetryHeld)
    return;
  }
  if (v.wait_for != 0) {
    auto other = tracees_.find(v.wait_for);
    if (other != tracees_.end() && (other->second.watching || other->second.settling)) {
      // Left stopped here until that thread's call has ended (CallEnded),
      // or for kHoldLimitNs in all (ExpireHolds).
      if (since == retry_since_ns_.end()) retry_since_ns_.emplace(tid, MonoNowNs());
      held_[v.wait_for].push_back(tid);
      // A call let run without an exit stop ends, for guard, at its
      // thread's next stop: made to come now, whatever the thread does
      // next (it may wait for this one: a pipe, a join) and whatever
      // signals it blocks (the settle nudge is a signal).
      if (other->second.settling) ptrace(PTRACE_INTERRUPT, v.wait_for, 0, 0);
      return;
    }
    // The tracer knows of no call of that thread: whatever it was, it is
    // over as far as anything here will ever tell.
    sink_->Abandon(v.wait_for);
    CallEnded(v.wait_for);
    return OnSeccompStop(tid, t);
  }
  retry_since_ns_.erase(tid);
  if (v.deny_errno != 0) {
    // A tracee that cannot be read was killed meanwhile: its call never runs.
    if (ptrace(PTRACE_GETREGS, tid, 0, &r.regs) != 0) return Resume(tid, 0);
    r.SkipWithError(v.deny_errno);
    ptrace(PTRACE_SETREGS, tid, 0, &r.regs);
    return Resume(tid, 0);
  }
  if (v.settle_later) {
    // One stop for this call: the sink learns its outcome once the thread
    // is past it (Settle). If the tracee was killed meanwhile, it stays
    // `settling` and its death marks the call as of unknown outcome.
    t->settling = true;
    nudge_.Unsettled(tid);
    TestKillPointCallLetRun(m);  // test-only (test_kill_point.h)
    return Resume(tid, 0);
  }
  if (!v.watch_exit) return Resume(tid, 0);
  // From a seccomp stop, PTRACE_SYSCALL stops next at this call's exit.
  // If that fails the tracee was killed meanwhile: it stays `watching`, so
  // that its exit marks the recorded call as of unknown outcome.
  t->watching = true;
  TestKillPointCallLetRun(m);  // test-only (test_kill_point.h)
  ptrace(PTRACE_SYSCALL, tid, 0, 0);
}

void Tracer::OnGuardReachingCall(pid_t tid, long nr, const uint64_t args[6]) {
  LiveProcessFacts facts(front, [this](pid_t pid) { return tracees_.contains(pid); });
  SignalDecision d = DecideSignalCall(nr, args, tid, facts);
  if (d.verdict == SignalVerdict::kRun) return Resume(tid, 0);
  SyscallRegs r;
  // A tracee that cannot be read was killed meanwhile: its call never runs.
  if (ptrace(PTRACE_GETREGS, tid, 0, &r.regs) != 0) return Resume(tid, 0);
  if (d.verdict == SignalVerdict::kRefuse) {
    log_->warn("tid {}: syscall {} aimed at guard's own process refused (EPERM)", tid, nr);
    r.SkipWithError(EPERM);
  } else {
    // The caller may be in the group: signalled like the others, before
    // its call returns (SIGKILL ends it here, SIGSTOP when it returns).
    const int err = SignalGroupButGuard(d.group, d.sig, facts);
    log_->info("tid {}: signal {} to process group {} sent to all but guard: {}", tid, d.sig, d.group,
               err == 0 ? "done" : std::strerror(err));
    if (err != 0) r.SkipWithError(err);
    else r.SkipWithResult(0);
  }
  ptrace(PTRACE_SETREGS, tid, 0, &r.regs);
  Resume(tid, 0);
}

void Tracer::OnSyscallExit(pid_t tid, Tracee* t) {
  ++exit_stops_;
  if (t->watching) {
    (void)TestKillPointCallReturned(tid);  // test-only (test_kill_point.h)
    errno = 0;
    long result = ptrace(PTRACE_PEEKUSER, tid, kReturnRegisterOffset, 0);
    // A tracee killed at this very stop cannot be read: it stays `watching`,
    // so that its death marks the call as of unknown outcome (and its paths
    // get final states) instead of leaving it with no outcome and no trace.
    if (errno == 0) {
      t->watching = false;
      sink_->After(tid, result);
      CallEnded(tid);
    }
  }
  Resume(tid, 0);
}

void Tracer::OnSignalDelivery(pid_t tid, Tracee* t, int sig) {
  // A signal is delivered on the way back to user space: past any call.
  if (!Settle(tid, t)) return Resume(tid, sig);
  if (sig == SettleNudge::kSignal) {
    // guard's own, sent only to bring the thread here: never delivered.
    siginfo_t si{};
    if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 && SettleNudge::IsNudge(si)) return Resume(tid, 0);
  }
  MutationRequest req;
  Status predicted;
  if (PredictCoreDump(tid, sig, &req, &predicted)) {
    // The kernel will replace a file with the dump as it acts on the signal:
    // capture it like the open it amounts to, now, while it can be refused.
    Mutation m;
    ResolveMutation(tid, req, predicted, &m, resolve_);
    Verdict v = sink_->Before(m);
    if (v.deny_errno != 0) {
      // A dump cannot be failed like a call: with no core limit, it is not made.
      struct rlimit none = {0, 0};
      if (prlimit(tid, RLIMIT_CORE, &none, nullptr) != 0) {
        log_->warn("cannot prevent the core dump of pid {}: {}", tid, std::strerror(errno));
      }
    } else if (v.watch_exit || v.settle_later) {
      // The process dies dumping: its death is the dump's only outcome, an
      // unknown one (Abandon), and the file's final state is read at the seal.
      t->watching = true;
    }
  }
  Resume(tid, sig);  // deliver the signal unchanged
}

void Tracer::OnGroupStop(pid_t tid, Tracee* t, int sig) {
  // Stay stopped, but let SIGCONT wake the tracee (PTRACE_LISTEN).
  ptrace(PTRACE_LISTEN, tid, 0, 0);
  // A signal sent to a listening tracee (a settle nudge that crossed its
  // stop) reports the same group-stop again: the command stopped once.
  if (tid != main_pid_ || t->stopped) return;
  t->stopped = true;
  if (on_stop) on_stop(sig);
  else StopLike(sig);
}

Status Tracer::Run(TracedChild* child, int* main_status) {
  main_pid_ = child->pid();
  // The command stopped itself to be seized (child_launch.h); that first
  // group-stop is not the user's Ctrl-Z.
  tracees_[main_pid_].starting = true;
  bool launched = false;
  // Once the command's first process has ended: when to tell on_main_end
  // that others still run (0: not waiting to). The grace lets the exits
  // that are already on their way be reaped first.
  int64_t main_end_due_ns = 0;
  for (;;) {
    // Checked at every turn: busy background processes must not hold it off.
    if (main_end_due_ns != 0 && MonoNowNs() >= main_end_due_ns) {
      main_end_due_ns = 0;
      on_main_end(*main_status, tracees_.size());
    }
    // Threads held for a retry are handed back every 100 us or so, whether
    // other stops keep coming or not; those held for another's call, once
    // held too long.
    if (!held_.empty() && MonoNowNs() - last_expiry_ns_ >= kRetryEveryNs) ExpireHolds();
    if (!retry_.empty() && MonoNowNs() - last_retry_ns_ >= kRetryEveryNs) RetryHeld();
    int status = 0;
    const bool poll = main_end_due_ns != 0 || !retry_.empty() || !held_.empty();
    pid_t tid = waitpid(-1, &status, __WALL | (poll ? WNOHANG : 0));
    if (tid < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) break;
      return Status::FromErrno("waitpid", errno);
    }
    if (tid == 0) {  // WNOHANG: nothing to do yet (the grace, or threads held)
      usleep(retry_.empty() && held_.empty() ? 500 : 50);
      continue;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      auto it = tracees_.find(tid);
      if (it != tracees_.end()) {
        // A thread that exited by itself was past its last call (the tree
        // tells what that did); one a signal killed may have died inside it.
        // (A sibling's exit_group ends a thread as WIFEXITED too: the call
        // it was in is over all the same, done or not, and the tree tells.)
        if (it->second.settling && WIFEXITED(status)) Settle(tid, &it->second);
        if (it->second.watching || it->second.settling) sink_->Abandon(tid);
        nudge_.Settled(tid);
      }
      tracees_.erase(tid);
      ForgetHeld(tid);
      CallEnded(tid);
      views_.Forget(tid);
      sink_->ForgetProcess(tid);
      if (tid == main_pid_) {
        *main_status = status;
        if (on_main_end && !tracees_.empty()) main_end_due_ns = MonoNowNs() + kMainEndGraceNs;
        if (!launched) {
          launched = true;
          Status s = child->FinishLaunch();
          if (!s.ok()) return s;
        }
      }
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    views_.Stopped(tid);  // past any call it was in
    int sig = WSTOPSIG(status);
    int event = status >> 16;
    log_->debug("stop: tid {} sig {} event {}", tid, sig, event);
    Tracee& t = tracees_[tid];
    // Any stop but a seccomp stop or a signal's delivery (which settle
    // themselves) finds the thread past its last call: in fork, clone or
    // exec, or stopped on its way back to user space.
    if (event != 0 && event != PTRACE_EVENT_SECCOMP && !Settle(tid, &t)) {
      Resume(tid, 0);
      continue;
    }
    switch (event) {
      case PTRACE_EVENT_SECCOMP:
        OnSeccompStop(tid, &t);
        continue;
      case PTRACE_EVENT_FORK:
      case PTRACE_EVENT_VFORK:
      case PTRACE_EVENT_CLONE: {
        unsigned long new_tid = 0;
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &new_tid) == 0) tracees_[static_cast<pid_t>(new_tid)];
        Resume(tid, 0);
        continue;
      }
      case PTRACE_EVENT_EXEC: {
        unsigned long former = 0;
        // A non-leader thread that execs takes over the leader's pid.
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &former) == 0 && static_cast<pid_t>(former) != tid) {
          // The thread that ran exec is past its calls; the leader whose
          // pid it takes died where it was (`t` was the leader's).
          if (auto f = tracees_.find(static_cast<pid_t>(former)); f != tracees_.end()) Settle(f->first, &f->second);
          if (t.watching || t.settling) sink_->Abandon(tid);
          t.watching = t.settling = false;
          nudge_.Settled(tid);
          CallEnded(tid);
          tracees_.erase(static_cast<pid_t>(former));
          ForgetHeld(static_cast<pid_t>(former));
          ForgetHeld(tid);  // the leader, held maybe, died; its id is the new program's
          views_.Forget(static_cast<pid_t>(former));
          sink_->ForgetProcess(static_cast<pid_t>(former));
        }
        views_.Forget(tid);
        sink_->ForgetProcess(tid);
        if (tid == main_pid_ && !launched) {
          launched = true;
          // The exec happened, so the launch worked: an error reported now
          // is the launcher's own, and tracing must go on regardless.
          Status s = child->FinishLaunch();
          if (!s.ok()) log_->warn("the command started, but its launcher reported: {}", s.ToString());
        }
        Resume(tid, 0);
        continue;
      }
      case PTRACE_EVENT_STOP:
        if (IsStopSignal(sig) && t.starting) {
          t.starting = false;
          ptrace(PTRACE_LISTEN, tid, 0, 0);  // the SIGCONT sent at seize wakes it
        } else if (IsStopSignal(sig)) {
          OnGroupStop(tid, &t, sig);
        } else {
          // A new tracee's first stop, or woken from a group-stop (SIGCONT
          // reaches a PTRACE_LISTEN tracee as this stop, with SIGTRAP).
          if (t.stopped) {
            t.stopped = false;
            if (on_continue) on_continue();
          }
          Resume(tid, 0);
        }
        continue;
      default:
        break;
    }
    if (sig == (SIGTRAP | 0x80)) {
      OnSyscallExit(tid, &t);
      continue;
    }
    OnSignalDelivery(tid, &t, sig);
  }
  if (!launched) return child->FinishLaunch();
  return Status::Ok();
}

}  // namespace guard
