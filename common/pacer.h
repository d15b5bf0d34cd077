// Pacer: what a thread that works every interval waits on between two
// rounds (the group commit). SteadyPacer waits on the steady clock; a unit
// test passes a pacer whose time it moves by hand
// (tests/unit/support/manual_pacer.h), so that what must not happen before
// an interval has passed is shown without sleeping.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace guard {

class Pacer {
 public:
  virtual ~Pacer() = default;
  // Blocks until `interval` has passed since the call, or at once once
  // Wake() was called.
  virtual void Wait(std::chrono::nanoseconds interval) = 0;
  // Ends the current Wait and every later one at once (the thread stops).
  virtual void Wake() = 0;
};

class SteadyPacer final : public Pacer {
 public:
  void Wait(std::chrono::nanoseconds interval) override;
  void Wake() override;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;  // guarded by mu_
};

}  // namespace guard
