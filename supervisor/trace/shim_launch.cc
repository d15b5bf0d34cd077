#include "supervisor/trace/shim_launch.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "common/path_util.h"

namespace guard {

namespace {

// The ring's data: 8 MiB holds some 30,000 of the shim's records, far more
// than a session produces between two drains.
constexpr uint64_t kRingCapacity = uint64_t{8} << 20;

bool IsFile(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

}  // namespace

Status FindShim(std::string* path) {
  if (const char* forced = getenv("GUARD_SHIM_PATH"); forced != nullptr && *forced != '\0') {
    if (!IsFile(forced)) return Status::NotFound(std::string("GUARD_SHIM_PATH: no such library: ") + forced);
    *path = forced;
    return Status::Ok();
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return Status::FromErrno("/proc/self/exe", errno);
  exe[n] = '\0';
  const std::string dir = ParentDir(exe);
  for (const std::string& candidate : {dir + "/interpose/libguard-shim.so", dir + "/../lib/guard/libguard-shim.so"}) {
    if (IsFile(candidate)) {
      *path = candidate;
      return Status::Ok();
    }
  }
  return Status::NotFound("the preload shim (libguard-shim.so) is not installed beside " + std::string(exe));
}

Status PrepareShim(const std::string& shim_path, const std::string& session, const std::string& root,
                   const std::string& state_dir, const std::string& pending_dir, bool allow_uncaptured,
                   ShimLaunch* out) {
  GUARD_RETURN_IF_ERROR(RingSegment::Create(kRingCapacity, &out->segment));
  std::string preload = shim_path;
  // The user's own preloads stay, after the shim: its entry points must
  // be the first found.
  if (const char* had = getenv("LD_PRELOAD"); had != nullptr && *had != '\0') preload += std::string(":") + had;
  out->env = {
      "LD_PRELOAD=" + preload,
      "GUARD_SHIM_RING=" + out->segment.name(),
      "GUARD_SHIM_PENDING=" + pending_dir,
      "GUARD_STATE_DIR=" + state_dir,
      "GUARD_ROOT=" + root,
      "GUARD_SESSION=" + session,
      std::string("GUARD_ON_CAPTURE_FAILURE=") + (allow_uncaptured ? "allow" : "block"),
  };
  return Status::Ok();
}

}  // namespace guard
