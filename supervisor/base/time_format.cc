#include "supervisor/base/time_format.h"

#include <time.h>

namespace guard {

std::string ShownTime(int64_t wall_ns) {
  time_t secs = static_cast<time_t>(wall_ns / 1000000000);
  struct tm tm;
  if (wall_ns <= 0 || ::localtime_r(&secs, &tm) == nullptr) return "?";
  char buf[32];
  if (::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0) return "?";
  return buf;
}

}  // namespace guard
