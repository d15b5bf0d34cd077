// FSEvents' events reduced to watch hints (watch_source.h): the platform-free
// half of the macOS source, so that it is built and unit-tested on Linux
// (tests/unit/watch/fsevents_hints_test.cc); fsevents_source_darwin.cc
// feeds it what the stream's callback receives.
//
// What it decides, from Apple's documentation of FSEventStreamEventFlags:
//   - a directory created, removed or renamed (ItemIsDir with ItemCreated,
//     ItemRemoved or ItemRenamed), a mount or unmount, an event with no item
//     flag (a directory-level event), MustScanSubDirs alone: kTree at the
//     path, since what is beneath it may have come or gone with it;
//   - any other item event (a file, a symlink, a directory's metadata):
//     kPath;
//   - UserDropped, KernelDropped, EventIdsWrapped, RootChanged: kAll, as
//     events may be lost or the root itself moved;
//   - HistoryDone alone: nothing.
// A rename is two events, one at each name, and each becomes a hint.
//
// Paths: the stream watches the root's canonical path, and FSEvents names
// what it reports by the real path on disk, which may differ from the root
// as guard knows it: /var, /tmp and /etc are firmlinks to /private/..., and
// the Data volume's paths may come as /System/Volumes/Data/... A path under
// one of those spellings of the root is mapped back to the root's; a path
// under none is outside the root and dropped (a sibling "/rootX" is not
// under "/root").
//
// Coalescing, within one batch: a path is hinted once; kTree covers every
// hint beneath it; kAll replaces everything. A batch never under-reports
// what its events said.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/watch/watch_source.h"

namespace guard {

struct FsEvent {
  std::string path;  // as FSEvents gives it
  uint32_t flags = 0;  // FSEventStreamEventFlags (fsevents_flags.h)
};

class FsEventMapper {
 public:
  // `root`: the root as guard names it (absolute, no trailing slash but
  // "/"); `canonical_root`: its real path (realpath), which FSEvents
  // reports.
  FsEventMapper(std::string root, std::string canonical_root);

  // Appends to `out` the hints of `events` (one callback's worth, in
  // order), coalesced with each other and with what `out` held already.
  void Decode(const std::vector<FsEvent>& events, std::vector<WatchHint>* out) const;

  // The root's name for `reported`, or false when it is not under the root.
  bool MapPath(const std::string& reported, std::string* mapped) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::vector<std::string> spellings_;  // of the root, as FSEvents may report it
};

// What one event asks for, before mapping; false for nothing (HistoryDone).
bool FsEventScope(uint32_t flags, WatchHint::Scope* scope);

}  // namespace guard
