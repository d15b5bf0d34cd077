// What both watch sessions (Linux's Session::OpenWatch, macOS's
// WatchLaunch) take alike: the baseline's options from the environment, and
// the line a session ends with.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/session_meta.h"
#include "common/status.h"
#include "supervisor/watch/watched_tree.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace guard {

// The tree's options for `root` with guard's own directories `own` left
// out, and from the environment: GUARD_WATCH_BASELINE_BYTES, the
// baseline's budget (watched_tree.h), for tests and for trees whose size
// the user knows; GUARD_WATCH_BASELINE, how the baseline may save content
// besides copying it, a comma-separated list of "git" (a clean tracked file
// by its object id: *by_git) and "clone" (a copy-on-write clone), "copy"
// alone for neither; unset, both where they apply. kInvalidArgument names
// the variable.
Status WatchOptionsFromEnv(const std::string& root, const std::vector<std::string>& own, WatchedTreeOptions* out,
                           bool* by_git);

// guard.log's lines on what the baseline saved without copying it (by
// clone, by git object id) and why it could not clone, if it could not.
void LogBaselineWithoutCopy(spdlog::logger& log, const BaselineSummary& baseline);

// The session's last line on stderr: the paths its calls touched, what was
// refused, not captured or kept by name only, and what to do next; then
// the log's incompleteness, if any.
void PrintSessionEndLine(const std::string& id, size_t touched, size_t refused, size_t not_captured,
                         const BaselineSummary& baseline, const SessionMeta& meta);

}  // namespace guard
