// LaunchWatchSession: a whole session in watch mode without a tracer, a
// shim or a front process: the macOS session (session_launcher_darwin.cc,
// docs/macos.md). Platform-free above its source (WatchPlatform), and built on
// Linux too, where tests drive it with the inotify source
// (tests/e2e/watch_launch_test.cc, through GUARD_TEST_WATCH_LAUNCH=1 in
// session_launcher_linux.cc).
//
// A session's life, in this one process:
//   the root, the state directory and the previous session (recovered, and
//   reported if it ended abnormally); the session's directory and meta.json;
//   the store, the journal, capture, the work saver and the group commit;
//   the platform's source's watches, then the baseline (WatchSession);
//   the mark channel and the keeper; the command in a process group of its
//   own (command_group.h); the watcher, the saver and the checkpoints;
//   when every process of the group has ended, the last round, one line
//   for the user, and the seal. The caller gets the command's status after
//   the seal (no front process to hand it back earlier).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "supervisor/commands/session_launcher.h"
#include "supervisor/watch/watch_source.h"

namespace guard {

struct WatchPlatform {
  // Opens the platform's source on `root`, watching from now on; the
  // `excluded` directories (guard's own) need no watch.
  std::function<Status(const std::string& root, const std::vector<std::string>& excluded,
                       std::unique_ptr<WatchSource>* out)>
      open_source;
};

LaunchOutcome LaunchWatchSession(const RunCommand::Options& options, const WatchPlatform& platform);

}  // namespace guard
