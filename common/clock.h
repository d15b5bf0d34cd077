// The two clocks guard stamps records with: wall time (for people: when a
// session ran) and monotonic time (for intervals: never jumps).
#pragma once

#include <time.h>

#include <cstdint>

namespace guard {

int64_t WallNowNs();
int64_t MonoNowNs();
// A timespec (a stat time, a clock reading) in nanoseconds.
inline int64_t TimespecNs(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

}  // namespace guard
