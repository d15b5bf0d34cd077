// Loading the preload shim into the command (--mode auto, --mode preload): finding the
// library, making the session's ring segment, and the environment that
// tells the shim where they are (docs/shim.md, "What guard gives the shim").
#pragma once

#include <string>
#include <vector>

#include "common/ring_segment.h"
#include "common/shim_interface.h"
#include "common/status.h"

namespace guard {

// "NAME=value" for the command's environment, NAME one of
// common/shim_interface.h's GUARD_ENV_*.
std::string EnvEntry(const char* name, const std::string& value);

// The shim library: $GUARD_SHIM_PATH if set, else beside the guard binary
// in a build tree (interpose/libguard-shim.so), else where it is installed
// (../lib/guard/libguard-shim.so from the binary). NotFound when none is.
Status FindShim(std::string* path);

struct ShimLaunch {
  RingSegment segment;
  // "K=V" entries for the command's environment (child_launch.h).
  std::vector<std::string> env;
};

// Makes the ring segment and the environment of a session whose capture is
// `shim_path` on top of the tracer: `session` names its pending blobs,
// `pending_dir` is the session's inbox (state_dir.h) and `inbox_root` the
// directory of all inboxes (both guarded like the state directory), `root`
// and `state_dir` canonical, `allow_uncaptured` the capture-failure policy,
// `alone` that no tracer stands behind the shim (--mode preload:
// capture_alone.h). The shim is told the protocol guard speaks too
// (common/shim_interface.h).
Status PrepareShim(const std::string& shim_path, const std::string& session, const std::string& root,
                   const std::string& state_dir, const std::string& pending_dir, const std::string& inbox_root,
                   bool allow_uncaptured, bool alone, ShimLaunch* out);

// Whether `path` is a program LD_PRELOAD cannot reach: an ELF file without
// a PT_INTERP header, or a script whose interpreter is one
// (common/exec_kind.h). False when it cannot be read or told.
bool IsStaticProgram(const std::string& path);

}  // namespace guard
