// The two clocks guard stamps records with: wall time (for people: when a
// session ran) and monotonic time (for intervals: never jumps).
#pragma once

#include <cstdint>

namespace guard {

int64_t WallNowNs();
int64_t MonoNowNs();

}  // namespace guard
