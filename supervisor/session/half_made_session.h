// A session directory without meta.json: guard stopped (a full state
// directory, a power loss) between making the directory and writing its
// meta.json. Left alone, every command warned of it and gc could not
// remove it. Recovery completes or removes it:
//  - no journal record: nothing was captured; the directory (and the
//    session's empty inbox) is removed;
//  - records: meta.json is rebuilt from what is there (the root and the
//    command from the session's guard.log, the start from the first
//    record), "running" with no supervisor, so that recovery then seals it
//    as any orphan, "recovered".
// Only a directory untouched for kHalfMadeAgeNs is taken for half-made: a
// session being created right now has no meta.json for a moment.
#pragma once

#include <cstdint>
#include <string>

#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

inline constexpr int64_t kHalfMadeAgeNs = 30'000'000'000;

enum class HalfMade { kNot, kRemoved, kRebuilt };

// Completes or removes session `id` if it is half-made (above); *what says which.
Status MendHalfMadeSession(const StateDir& state, const std::string& id, HalfMade* what);

}  // namespace guard
