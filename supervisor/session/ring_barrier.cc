#include "supervisor/session/ring_barrier.h"

#include <thread>

#include "common/clock.h"

namespace guard {

Status WaitForRingDelivered(ShimFeed* feed, std::mutex* mu, std::chrono::nanoseconds bound) {
  const uint64_t target = feed->ClaimedPosition();
  const int64_t deadline = MonoNowNs() + bound.count();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(*mu);
      feed->DrainLocked();
    }
    if (feed->DeliveredPosition() >= target) return Status::Ok();
    if (MonoNowNs() >= deadline) {
      return Status::IOError("the shim's ring was not drained past the mark's request in time (a claim at " +
                             std::to_string(feed->DeliveredPosition()) + " is not published)");
    }
    // The claim's owner is publishing it, or the feed's thread is freeing
    // a dead owner's: a short wait, not a spin.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace guard
