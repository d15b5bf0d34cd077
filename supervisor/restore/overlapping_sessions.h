// Sessions that ran at the same time as the one being undone, on the same
// root. Their changes to a path the undone session had already touched are
// folded into that session's end state (sealing records what the path held
// then, whoever wrote it), so comparing the tree with that end state cannot
// see them: `undo --session B` would put back the state before B and drop,
// without a word, what A wrote in between. These changes are conflicts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/session_history.h"
#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

// The other sessions of `session`'s root whose time span overlaps its own.
Status LoadOverlappingSessions(const StateDir& state, const SessionMeta& session, std::vector<SessionHistory>* out);

// For each path that `session` touched after op `boundary`: the id of an
// overlapping session that changed it after the first such touch and
// before `session` ended. Changes made later are visible in the tree
// (they differ from the end state); those made before are in the
// pre-image the undo puts back.
std::map<std::string, std::string> ChangedByOverlappingSessions(const SessionHistory& session, uint64_t boundary,
                                                                const std::vector<SessionHistory>& others);

}  // namespace guard
