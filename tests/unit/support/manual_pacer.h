// A Pacer (common/pacer.h) whose time the test moves by hand: a Wait
// returns once Advance has moved the time by its interval since the Wait
// began, or after Wake. AwaitWaits tells the test that the paced thread is
// inside its n-th Wait, where it does nothing until the test says so: what
// must not happen before the interval has passed is shown without a sleep.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "common/pacer.h"

namespace guard::testing {

class ManualPacer final : public Pacer {
 public:
  void Wait(std::chrono::nanoseconds interval) override {
    std::unique_lock<std::mutex> lock(mu_);
    const std::chrono::nanoseconds until = now_ + interval;
    ++waits_;
    last_interval_ = interval;
    cv_.notify_all();
    cv_.wait(lock, [&] { return woken_ || now_ >= until; });
  }
  void Wake() override {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }
  void Advance(std::chrono::nanoseconds by) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += by;
    cv_.notify_all();
  }
  // Returns once `n` Waits have begun.
  void AwaitWaits(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return waits_ >= n; });
  }
  uint64_t waits() {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }
  std::chrono::nanoseconds last_interval() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_interval_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::nanoseconds now_{0};            // guarded by mu_
  std::chrono::nanoseconds last_interval_{0};  // guarded by mu_
  uint64_t waits_ = 0;                         // guarded by mu_
  bool woken_ = false;                         // guarded by mu_
};

}  // namespace guard::testing
