// session_launcher.h on macOS. There is no tracer (no seccomp, no ptrace
// that stops at a system call) and no shim (dyld drops DYLD_INSERT_LIBRARIES
// for hardened and SIP-protected programs: docs/macos.md), so the one mode
// is watch mode, and --mode auto means it: the session of watch_launch.h
// with the FSEvents source (supervisor/watch/fsevents_source.h).
#include "supervisor/commands/session_launcher.h"

#include <cstdio>

#include "supervisor/base/mark_label.h"
#include "supervisor/commands/watch_launch.h"
#include "supervisor/session/mark_channel.h"
#include "supervisor/watch/fsevents_source.h"

namespace guard {

LaunchOutcome LaunchSession(const RunCommand::Options& options) {
  if (options.mode == "trace" || options.mode == "preload") {
    std::fprintf(stderr, "guard: --mode %s needs Linux; on macOS only --mode watch exists\n", options.mode.c_str());
    return {kExitGuardError, ""};
  }
  WatchPlatform platform;
  // guard's own directories under the root are left out by the comparison
  // (watched_tree.h): an FSEvents stream watches the root whole.
  platform.open_source = [](const std::string& root, const std::vector<std::string>&,
                            std::unique_ptr<WatchSource>* out) { return OpenFsEventsSource(root, out); };
  return LaunchWatchSession(options, platform);
}

// Over the mark channel (session/mark_channel.h): the nearest ancestor
// that listens is the session's guard.
long RequestMark(std::string_view label, bool step) {
  MarkRequest request;
  request.label.assign(CutMarkLabel(label));
  request.step = step;
  return AskForMark(request);
}

}  // namespace guard
