// GUARD_STATS_FILE: the figures guard writes at a session's end ("name
// value" lines: seccomp_stops, shim_calls, seal_ns, maxrss_kb, ...;
// supervisor/commands/run_command.cc), read back by name.
#pragma once

#include <map>
#include <string>

namespace guard::e2e {

// The figures in `path`; empty when it is missing.
std::map<std::string, long long> ReadGuardStats(const std::string& path);

}  // namespace guard::e2e
