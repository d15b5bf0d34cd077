// Whether the session's work is in the tree now: each path's end state (its
// final state, or its last post-image) against what the tree holds, for the
// reconnect summary and `guard status`. One lstat per path when the end state
// carries a stat signature the path still has; otherwise type, mode, target
// and size, and the content hashed only when the size matches.
#pragma once

#include <string>
#include <vector>

#include "common/session_history.h"

namespace guard {

struct WorkInTree {
  size_t compared = 0;               // paths with a known end state
  std::vector<std::string> differ;   // of those, the ones the tree does not hold as the session left them
};

WorkInTree CompareTreeWithEnd(const SessionHistory& history, const std::vector<std::string>& paths);

}  // namespace guard
