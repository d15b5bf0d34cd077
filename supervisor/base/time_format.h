// The one form in which guard shows a time to a person: local time,
// "2026-12-07 11:23:32" (status, sessions, show, recovery's summary). JSON
// output keeps ISO 8601 in UTC (FormatIso8601, docs/json.md).
#pragma once

#include <cstdint>
#include <string>

namespace guard {

// `wall_ns`: nanoseconds since the epoch. "?" for a time that cannot be shown.
std::string ShownTime(int64_t wall_ns);

}  // namespace guard
