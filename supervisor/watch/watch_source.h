// The platform layer of watch mode: what a platform's change notification
// (inotify on Linux, FSEvents on macOS) tells guard, reduced to hints.
//
// A hint says only where to look: watch mode never trusts an event for what
// changed. It compares what is at the hinted names now with the state it
// saved last and records the difference (capture/capture_observed.cc). So a
// platform may coalesce, duplicate or over-report freely; it must never
// under-report: when it may have lost events (a queue overflow, a dropped
// stream, a watch that could not be added), it says so with a wider hint.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

struct WatchHint {
  enum class Scope : unsigned char {
    kPath,  // this name alone (a file's content or metadata, its creation or removal)
    kTree,  // this name and everything beneath it (a new or moved-in directory, a lost subtree)
    kAll,   // everything under the root: events were lost (overflow, dropped stream)
  };
  std::string path;  // absolute; under the root (kAll: the root)
  Scope scope = Scope::kPath;

  bool operator==(const WatchHint& o) const { return path == o.path && scope == o.scope; }
};

class WatchSource {
 public:
  virtual ~WatchSource() = default;
  // Waits up to `timeout` for notifications and appends their hints to
  // `out` (none on a timeout). An error means the source can report
  // nothing more: the caller rescans everything and stops watching.
  virtual Status Wait(std::vector<WatchHint>* out, std::chrono::milliseconds timeout) = 0;
  // Appends the hints of every change the system had queued when Drain was
  // called, without waiting for new ones: after it returns, every change
  // made before the call is in `out` or in an earlier Wait's. A mark is
  // exact through this (docs/capture.md, "Watch mode").
  virtual Status Drain(std::vector<WatchHint>* out) = 0;
};

}  // namespace guard
