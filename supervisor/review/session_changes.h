// SessionChanges: what the review commands compare. The paths a session
// touched (up to some operation), each with its state before the session and
// its state at the chosen moment, as SessionHistory derives them.
//
// Paths below a directory the session renamed are not named by any
// operation; they are found through the kFinal records the supervisor writes
// for them and mapped back through the renames, so that a moved directory
// shows as its content moving. A path below an ancestor that is not a
// directory at that moment is absent then, whatever else the history says.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/journal_record.h"
#include "common/session_history.h"

namespace guard {

// The end of a session, as a sequence number: every operation is at or before it.
inline constexpr uint64_t kSessionEnd = std::numeric_limits<uint64_t>::max();

struct PathChange {
  std::string path;  // relative to the root; "." is the root itself
  bool before_known = false;
  bool after_known = false;
  FileState before;  // before the session
  FileState after;   // just after the chosen operation
};

class SessionChanges {
 public:
  // The paths touched by operations with seq <= `to_seq`, sorted so that a
  // directory comes before what it holds. `only` (root-relative paths, may be
  // empty for all) keeps the paths equal to or below one of them.
  static SessionChanges Collect(const SessionHistory& history, uint64_t to_seq,
                                const std::vector<std::string>& only);
  // Every path the whole session touched, in its state just after `to_seq`
  // (a path first touched later: as it was before the session). What a
  // checkpoint at a mark writes over a parent that may hold a later state.
  static SessionChanges CollectEveryPathAt(const SessionHistory& history, uint64_t to_seq);

  const std::vector<PathChange>& paths() const { return paths_; }

 private:
  static SessionChanges Collect(const SessionHistory& history, uint64_t names_to_seq, uint64_t to_seq,
                                const std::vector<std::string>& only);
  std::vector<PathChange> paths_;
};

}  // namespace guard
