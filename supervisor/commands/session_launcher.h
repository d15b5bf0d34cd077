// The platform's part of a session: starting the command under capture and
// following it until the session ends, and a mark asked for from inside a
// session. The commands reach the platform only through these calls, so
// that a build leaves out what its platform lacks (CMakeLists.txt):
//   Linux: session_launcher_linux.cc, the tracer and the shim (session.h,
//          supervisor/trace/, interpose/).
//   macOS: session_launcher_darwin.cc, watch mode (docs/macos.md); until it
//          lands there, a plain refusal.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/commands/run_command.h"

namespace guard {

struct LaunchOutcome {
  // guard's exit status: the command's, 128+N for signal N, or
  // 125/126/127 when guard or the launch failed.
  int code = 0;
  std::string session_id;  // "" if no session was made
};

// Runs `options.argv` as a new session (RunCommand::Run, after its checks).
LaunchOutcome LaunchSession(const RunCommand::Options& options);

// Asks the session this process runs in for a mark (`guard mark`). Returns
// the mark's number (>= 1), or -errno: -EFAULT or -ENOSYS when no session
// answers (this process runs outside one).
long RequestMark(std::string_view label, bool step);

}  // namespace guard
