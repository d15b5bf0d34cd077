// The mark's barrier under --mode preload (mark_listener.h): a mark made
// without the tracer must follow, in the journal, every call the shim put
// in the ring before it was asked for. The shim puts a call's CALL record
// before the call runs, so a process that ran a tool and then asked for a
// mark has every record of that tool claimed in the ring by then.
#pragma once

#include <chrono>
#include <mutex>

#include "common/status.h"
#include "supervisor/session/shim_feed.h"

namespace guard {

// Waits until `feed` (its capture lock `mu`) has delivered every record
// claimed in its ring when this was called, draining it meanwhile.
// kTimedOut-like IOError after `bound`: a producer holds a claim it does
// not publish (stopped in the middle of a put) and is not dead.
Status WaitForRingDelivered(ShimFeed* feed, std::mutex* mu, std::chrono::nanoseconds bound);

}  // namespace guard
