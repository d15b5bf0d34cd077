// What `guard doctor` (doctor_command.h) looks at on this machine: one
// finding per capability a capture mode needs. The probes are the
// platform's: doctor_probes_linux.cc here, doctor_probes_mac.cc in the
// macOS build. Each probe tries the thing itself where it can (a child
// that is seized, installs a filter, enters a namespace; a clone between
// two unnamed files at the root) rather than reading a setting about it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace guard {

struct Finding {
  std::string key;     // "ptrace", "seccomp", "user_namespaces", "inotify", "reflink", "shim"
  bool ok = false;
  std::string detail;  // one line: what was found, or why not
  std::map<std::string, int64_t> values;  // figures read (inotify's limits), for --json
};

// The findings, in the order they are shown. `root`: where the session's
// tree is (the filesystem the clone probe asks).
std::vector<Finding> ProbeMachine(const std::string& root);

// Whether this process may trace a child (PTRACE_SEIZE of one it forks;
// Linux only): `--mode auto` falls back on it (session.cc).
Finding ProbePtrace();

// A line naming the platform ("Linux 6.1.0, ext4 at ROOT").
std::string DescribeMachine(const std::string& root);

// Whether this platform has capture mode `mode` at all (macOS: watch
// alone; Linux: every mode).
bool PlatformHasMode(const std::string& mode);
// The finding watch mode needs: its change notification ("inotify",
// "fsevents").
const char* WatchSourceKey();
// What watch mode cannot promise here in particular, from the findings.
std::vector<std::string> WatchHereNotes(const std::map<std::string, Finding>& findings);

}  // namespace guard
