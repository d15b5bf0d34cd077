// RestoreNames: every root-relative name a restore must bring to its target.
//
// These are the paths the session's operations named, the paths with a
// final state, and every other name the same objects had at some moment of
// the session through its directory moves: a file that was `d/f` before
// `mv d e` is `e/f` after it, and a restore to either moment must deal with
// both names. Each name is mapped through the moves in time order only
// (backwards through the moves before the moment it was seen, forwards
// through those after), so the set grows linearly with the moves, never by
// combining moves that could not apply to the same object.
#pragma once

#include <set>
#include <string>

#include "common/session_history.h"

namespace guard {

std::set<std::string> RestoreNames(const SessionHistory& history);

}  // namespace guard
