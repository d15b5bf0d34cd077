// The summary guard prints when it starts in a root whose previous session
// ended abnormally, and `guard status` for the last session when it ended
// abnormally or its work is no longer in the tree (the agent was killed or crashed, or guard itself died and
// the session was recovered): when it ran, what, how it ended, what it
// changed, and the exact commands to review, re-apply or revert it.
#pragma once

#include <string>

#include "common/session_history.h"

namespace guard {

// Whether a session that ended this way deserves the summary.
bool EndedAbnormally(const SessionMeta& meta);
// The summary text (several lines, each ending in '\n'). For a session that
// ended normally it is for a user whose work left the tree since (a
// revert): with `only_if_work_gone`, "" when the work is in the tree.
std::string ReconnectSummary(const SessionHistory& history, bool only_if_work_gone = false);

}  // namespace guard
