// guard doctor's look at the agent's program on a Mac (doctor_probes_mac.cc):
// `claude` found on PATH, followed through symlinks and through one `#!`
// line (an npm install's `claude` may be a script run by node), and its
// code signature read (supervisor/base/code_signature.h): whether dyld
// would load an injected library into it. Platform-free, so that it is
// tested here on a Mac's binaries (tests/unit/commands/agent_signature_test.cc).
#pragma once

#include <string>

namespace guard {

struct AgentSignature {
  bool found = false;     // a program of that name on PATH
  std::string program;    // the Mach-O file read (after links and a #! line)
  bool read = false;      // its signature was read
  bool hardened = false;  // some architecture has the hardened runtime
  bool injectable = false;  // DYLD_INSERT_LIBRARIES reaches every architecture
  std::string detail;     // one line for doctor
};

// `name` looked for in `path` (PATH's value).
AgentSignature ProbeAgentSignature(const std::string& name, const std::string& path);

}  // namespace guard
