// SettleNudge: bounds how long a call let run without an exit stop
// (Verdict::settle_later) stays unsettled. Its outcome is learnt at the
// thread's next stop; a thread that makes no further call (a shell waiting
// for its child, an agent waiting for its model) would otherwise keep it
// open indefinitely, and with it the work saver's view of its paths
// (docs/capture.md, "One stop per call").
//
// A thread of its own sends such a thread, once it has been unsettled for
// `after`, one signal (kSignal, by tkill from guard's own pid): the thread
// stops at its delivery, which settles the call, and the tracer swallows
// the signal (IsNudge), so the program never sees it. A thread blocked in
// an interruptible call is woken as by any signal and the call restarted
// when it resumes, as after a debugger's stop.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace guard {

class SettleNudge {
 public:
  // Ignored by default, so that a nudge that reached a program anyway (its
  // thread ended and the id was reused meanwhile) does no harm.
  static constexpr int kSignal = SIGURG;

  explicit SettleNudge(std::chrono::milliseconds after) : after_(after) {}
  ~SettleNudge();  // stops the thread
  SettleNudge(const SettleNudge&) = delete;
  SettleNudge& operator=(const SettleNudge&) = delete;

  // From the tracer's thread: `tid` was let run with settle_later; it has
  // settled (or exited).
  void Unsettled(pid_t tid);
  void Settled(pid_t tid);

  // Whether a signal about to be delivered (its siginfo) is a nudge.
  static bool IsNudge(const siginfo_t& si);

 private:
  struct Waiting {
    int64_t since_ns = 0;
    bool sent = false;
  };
  void Run();

  const std::chrono::milliseconds after_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                          // guarded by mu_
  std::unordered_map<pid_t, Waiting> waiting_;     // guarded by mu_
  std::thread thread_;                             // started by the first Unsettled
};

}  // namespace guard
