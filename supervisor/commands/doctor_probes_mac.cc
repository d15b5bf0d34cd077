// guard doctor's probes on macOS (doctor_probes.h), compiled by the macOS
// build only and never run here (no Mac was at hand: docs/macos.md). Watch
// mode is the one mode there: it needs FSEvents, and clones (APFS) make its
// baseline cheap. The shim cannot load into a hardened-runtime program, such
// as Claude Code's binary, which is why watch mode exists.
#include <dlfcn.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <string>

#include "supervisor/commands/doctor_probes.h"

namespace guard {
namespace {

Finding ProbeApfs(const std::string& root) {
  Finding f{"apfs", false, "", {}};
  struct statfs fs {};
  if (statfs(root.c_str(), &fs) != 0) return f.detail = root + ": statfs failed", f;
  const std::string type = fs.f_fstypename;
  f.ok = type == "apfs";
  f.detail = type + " at " + root + (f.ok ? ": clonefile makes the baseline cheap" : ": no clones, copies instead");
  return f;
}

Finding ProbeFsEvents() {
  Finding f{"fsevents", false, "", {}};
  void* lib = dlopen("/System/Library/Frameworks/CoreServices.framework/CoreServices", RTLD_LAZY);
  f.ok = lib != nullptr && dlsym(lib, "FSEventStreamCreate") != nullptr;
  f.detail = f.ok ? "FSEventStreamCreate found (CoreServices)" : "CoreServices' FSEvents not found";
  return f;
}

// Whether the agent's binary (claude on PATH) has the hardened runtime,
// as codesign reports it: then no DYLD_INSERT_LIBRARIES reaches it.
Finding ProbeHardenedAgent() {
  Finding f{"agent_hardened", false, "", {}};
  FILE* p = popen("codesign -d --verbose=2 \"$(command -v claude)\" 2>&1", "r");
  std::string out;
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (p != nullptr) pclose(p);
  f.ok = out.find("(runtime)") != std::string::npos;
  f.detail = f.ok ? "claude uses the hardened runtime: an injected library would see nothing"
                  : "claude: no hardened runtime seen (or not installed)";
  return f;
}

}  // namespace

std::vector<Finding> ProbeMachine(const std::string& root) {
  return {ProbeApfs(root), ProbeFsEvents(), ProbeHardenedAgent()};
}

std::string DescribeMachine(const std::string& root) {
  utsname u{};
  uname(&u);
  return std::string("macOS (Darwin ") + u.release + " " + u.machine + "), root " + root;
}

}  // namespace guard
