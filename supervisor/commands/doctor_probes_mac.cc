// guard doctor's probes on macOS (doctor_probes.h), compiled by the macOS
// build only and never run here (no Mac was at hand: docs/macos.md). Watch
// mode is the one mode there: it needs FSEvents, and clones (APFS) make its
// baseline cheap. The shim cannot load into a hardened-runtime program, such
// as Claude Code's binary, which is why watch mode exists: whether the
// agent's binary is one is read from its code signature
// (agent_signature.h, platform-free and tested on Linux).
#include <dlfcn.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <string>

#include "supervisor/commands/agent_signature.h"
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

// ok: the agent's binary was read and has the hardened runtime (a fact
// shown, needed by no mode: watch mode sees every program's changes).
Finding ProbeHardenedAgent() {
  Finding f{"agent_hardened", false, "", {}};
  const char* path = std::getenv("PATH");
  AgentSignature a = ProbeAgentSignature("claude", path != nullptr ? path : "");
  f.ok = a.read && a.hardened;
  f.detail = a.detail;
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

bool PlatformHasMode(const std::string& mode) { return mode == "watch"; }

const char* WatchSourceKey() { return "fsevents"; }

std::vector<std::string> WatchHereNotes(const std::map<std::string, Finding>& f) {
  std::vector<std::string> out;
  out.push_back("no mount namespace on macOS: the command can reach guard's state directory (docs/security.md)");
  out.push_back("if guard dies, the keeper stops the command's process group; a process that left it runs on");
  auto apfs = f.find("apfs");
  if (apfs == f.end() || !apfs->second.ok) out.push_back("not APFS here: no clones, the baseline is copied");
  return out;
}

}  // namespace guard
