#include "supervisor/trace/shim_launch.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "common/exec_kind.h"
#include "common/path_util.h"
#include "common/unique_fd.h"

namespace guard {

namespace {

// The ring's data: 16 MiB holds some 60,000 of the shim's records, far more
// than a session produces between two drains, or some 64 of the largest
// inline pre-images (GUARD_SHIM_INLINE_MAX, common/shim_record.h). Shared
// memory, resident once written: the session's RSS grows by as much.
constexpr uint64_t kRingCapacity = uint64_t{16} << 20;

bool IsFile(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

}  // namespace

std::string EnvEntry(const char* name, const std::string& value) { return std::string(name) + "=" + value; }

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
                   const std::string& state_dir, const std::string& pending_dir, const std::string& inbox_root,
                   bool allow_uncaptured, bool alone, ShimLaunch* out) {
  GUARD_RETURN_IF_ERROR(RingSegment::Create(kRingCapacity, &out->segment));
  std::string preload = shim_path;
  // The user's own preloads stay, after the shim: its entry points must
  // be the first found.
  if (const char* had = getenv("LD_PRELOAD"); had != nullptr && *had != '\0') preload += std::string(":") + had;
  out->env = {
      "LD_PRELOAD=" + preload,
      EnvEntry(GUARD_ENV_SHIM_PROTOCOL, std::to_string(GUARD_SHIM_PROTOCOL)),
      EnvEntry(GUARD_ENV_SHIM_RING, out->segment.name()),
      EnvEntry(GUARD_ENV_SHIM_PENDING, pending_dir),
      EnvEntry(GUARD_ENV_SHIM_INBOX, inbox_root),
      EnvEntry(GUARD_ENV_STATE_DIR, state_dir),
      EnvEntry(GUARD_ENV_ROOT, root),
      EnvEntry(GUARD_ENV_SESSION, session),
      EnvEntry(GUARD_ENV_ON_CAPTURE_FAILURE, allow_uncaptured ? "allow" : "block"),
  };
  if (alone) out->env.push_back(EnvEntry(GUARD_ENV_SHIM_ALONE, "1"));
  return Status::Ok();
}

namespace {

enum guard_exec_kind KindOf(const std::string& path, std::string* interpreter) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return GUARD_EXEC_UNKNOWN;
  unsigned char head[GUARD_EXEC_HEAD];
  ssize_t n = pread(fd.get(), head, sizeof head, 0);
  if (n <= 0) return GUARD_EXEC_UNKNOWN;
  const char* interp = nullptr;
  size_t interp_len = 0;
  enum guard_exec_kind kind = guard_exec_kind_of(head, static_cast<size_t>(n), &interp, &interp_len);
  if (kind == GUARD_EXEC_SCRIPT) interpreter->assign(interp, interp_len);
  return kind;
}

}  // namespace

bool IsStaticProgram(const std::string& path) {
  std::string interpreter;
  enum guard_exec_kind kind = KindOf(path, &interpreter);
  if (kind == GUARD_EXEC_SCRIPT) {
    std::string ignored;
    kind = KindOf(interpreter, &ignored);
  }
  return kind == GUARD_EXEC_STATIC;
}

}  // namespace guard
