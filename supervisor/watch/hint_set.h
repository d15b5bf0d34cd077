// HintSet: the hints of one round of watching, coalesced (watch_source.h).
// A name hinted many times is looked at once; a name below a tree hinted
// whole is looked at with that tree; everything is looked at when a source
// says it lost events (kAll). Platform-free: the Linux and macOS sources
// feed the same set.
#pragma once

#include <string>
#include <vector>

#include "supervisor/watch/watch_source.h"

namespace guard {

class HintSet {
 public:
  explicit HintSet(std::string root) : root_(std::move(root)) {}

  // Adds one hint. A hint outside the root is ignored; one naming the
  // root itself as a tree is kAll, as a path its own state (its mode).
  void Add(const WatchHint& hint);
  void AddAll(const std::vector<WatchHint>& hints) {
    for (const WatchHint& h : hints) Add(h);
  }
  bool empty() const { return !all_ && names_.empty(); }
  bool all() const { return all_; }

  // The hints to act on, none covering another, in byte order of their
  // paths (a directory before what lies below it); the set is left empty.
  // After kAll: the one hint {root, kAll}.
  std::vector<WatchHint> Take();

 private:
  std::string root_;
  bool all_ = false;
  // Every hint added since the last Take, deduplicated and reduced there:
  // a burst of events repeats few names, and the reduction is one sort.
  std::vector<WatchHint> names_;
};

}  // namespace guard
