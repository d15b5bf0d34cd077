// session_launcher.h on macOS. There is no tracer (no seccomp, no ptrace
// that stops at a system call) and no shim (dyld drops DYLD_INSERT_LIBRARIES
// for hardened and SIP-protected programs: docs/macos.md), so the one mode
// is watch mode, and --mode auto means it. This build has no watch mode yet:
// it says so and starts nothing.
#include "supervisor/commands/session_launcher.h"

#include <cerrno>
#include <cstdio>

namespace guard {

LaunchOutcome LaunchSession(const RunCommand::Options& options) {
  if (options.mode == "trace" || options.mode == "preload") {
    std::fprintf(stderr, "guard: --mode %s needs Linux; on macOS only --mode watch exists\n", options.mode.c_str());
  } else {
    std::fprintf(stderr, "guard: on macOS only --mode watch exists and this build has none yet\n");
  }
  return {kExitGuardError, ""};
}

// Without a session there is nobody to answer.
long RequestMark(std::string_view, bool) { return -ENOSYS; }

}  // namespace guard
