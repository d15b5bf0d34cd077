#include "common/pacer.h"

namespace guard {

void SteadyPacer::Wait(std::chrono::nanoseconds interval) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, interval, [this] { return woken_; });
}

void SteadyPacer::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

}  // namespace guard
