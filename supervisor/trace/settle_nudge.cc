#include "supervisor/trace/settle_nudge.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"

namespace guard {

SettleNudge::~SettleNudge() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SettleNudge::Unsettled(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  waiting_[tid] = Waiting{MonoNowNs(), false};
  // Started lazily: sessions that never leave a call unsettled need no thread.
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void SettleNudge::Settled(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  waiting_.erase(tid);
}

bool SettleNudge::IsNudge(const siginfo_t& si) {
  return si.si_signo == kSignal && si.si_code == SI_TKILL && si.si_pid == getpid();
}

void SettleNudge::Run() {
  const int64_t after_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(after_).count();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, after_ / 2);
    const int64_t now = MonoNowNs();
    for (auto& [tid, w] : waiting_) {
      if (w.sent || now - w.since_ns < after_ns) continue;
      // One nudge per unsettled call: a thread that does not stop for it
      // is inside a call that blocks, and stops when that returns.
      w.sent = true;
      syscall(SYS_tkill, tid, kSignal);
    }
  }
}

}  // namespace guard
