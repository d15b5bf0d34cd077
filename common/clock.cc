#include "common/clock.h"

#include <time.h>

namespace guard {
namespace {

int64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

int64_t WallNowNs() { return Now(CLOCK_REALTIME); }
int64_t MonoNowNs() { return Now(CLOCK_MONOTONIC); }

}  // namespace guard
