// Checks that a recorded session describes what really happened to a tree:
// every pre-image is the content, type, mode and symlink target the path
// held, byte for byte; every final state is what the tree holds afterwards.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"

namespace guard::e2e {

struct PreImageReport {
  std::vector<std::string> errors;
  // Paths of the `before` snapshot whose content (a regular file) or target
  // (a symlink) was found, byte for byte, in a pre-image of the session.
  std::set<std::string> verified;
  size_t states_compared = 0;
};

// Replays the session's successful operations, in journal order, over a
// model of the tree seeded with `before` (taken just before the run), and
// compares each recorded `before` / `before2` state with what the model says
// the path held at that moment:
//  - a path untouched so far must match its snapshot entry: type, mode,
//    symlink target and, where the record names a blob, the blob's content;
//  - a path the model knows to be absent must be recorded kAbsent;
//  - a path changed earlier in the session is not compared (its content is
//    not in the snapshot), but its pre-image must still be present;
//  - a path outside the root must carry no state (kUnknown, or kAbsent
//    for an operation that creates it; no mode, no blob).
// The pre-image of kModify, kDelete of a regular file, and of the file a
// rename replaces, must be present. Renames and exchanges move what the
// model knows along with the paths, so `mv dir1 dir2; rm dir2/f` is checked
// against dir1/f's content.
PreImageReport CheckPreImages(const SessionView& session, const TreeSnapshot& before);

// Compares every kFinal record (post-images aside) with `after` (taken once guard has exited).
std::vector<std::string> CheckFinalStates(const SessionView& session, const TreeSnapshot& after);

}  // namespace guard::e2e
