// The macOS WatchSource (watch_source.h): an FSEvents stream on the root
// with file-level events (kFSEventStreamCreateFlagFileEvents | NoDefer |
// WatchRoot), delivered on a dispatch queue of its own; Drain is
// FSEventStreamFlushSync, which returns once every event that had occurred
// was handed to the callback. CoreServices and CoreFoundation are reached
// through dlopen/dlsym at run time, so that the link needs libSystem alone.
// What the events mean is decided in fsevents_hints.h, tested on Linux; this
// part (fsevents_source_darwin.cc) is built for macOS only and was never
// run on a Mac here (docs/macos.md).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "supervisor/watch/watch_source.h"

namespace guard {

// Watches `root` (absolute) from now on.
Status OpenFsEventsSource(const std::string& root, std::unique_ptr<WatchSource>* out);

}  // namespace guard
