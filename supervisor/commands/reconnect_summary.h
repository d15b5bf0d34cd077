// The summary guard prints when it starts in a root whose previous session
// ended abnormally (the agent was killed or crashed, or guard itself died and
// the session was recovered): when it ran, what, how it ended, what it
// changed, and the exact commands to review, re-apply or revert it.
#pragma once

#include <string>

#include "common/session_history.h"

namespace guard {

// Whether a session that ended this way deserves the summary.
bool EndedAbnormally(const SessionMeta& meta);
// The summary text (several lines, each ending in '\n').
std::string ReconnectSummary(const SessionHistory& history);

}  // namespace guard
