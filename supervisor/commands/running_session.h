// A session's directory and meta.json fields as both session launchers
// (Linux's Session, macOS's WatchLaunch) make them before the command runs.
#pragma once

#include <string>
#include <vector>

#include "common/session_meta.h"
#include "common/status.h"

namespace guard {

// Creates the session's directory under `sessions_dir` (*dir) and fills
// *meta as running: its root, argv, start time, supervisor, guard's
// version, and git's HEAD now (the first checkpoint's parent, read before
// the command can move it). Nothing is written to meta.json yet.
Status CreateRunningSession(const std::string& sessions_dir, const std::string& root,
                            const std::vector<std::string>& argv, const std::string& state_dir, SessionMeta* meta,
                            std::string* dir);

}  // namespace guard
