#include "supervisor/trace/path_resolver.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "common/file_io.h"
#include "common/path_util.h"
#include "supervisor/trace/fd_link.h"

namespace guard {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's limit (MAXSYMLINKS)

Status ReadLink(const std::string& path, std::string* out) { return ReadLinkAt(AT_FDCWD, path, path, out); }

std::string Proc(pid_t tid, const char* what) { return "/proc/" + std::to_string(tid) + "/" + what; }

// Pushes the components of `path` onto `stack`, the first one last.
void PushComponents(const std::string& path, std::vector<std::string>* stack) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < path.size();) {
    size_t slash = path.find('/', i);
    if (slash == std::string::npos) slash = path.size();
    if (slash > i) parts.push_back(path.substr(i, slash - i));
    i = slash + 1;
  }
  stack->insert(stack->end(), parts.rbegin(), parts.rend());
}

// realpath(3) of the absolute `path` as tracee `tid` would resolve it.
// /proc/self and /proc/thread-self are resolved by the kernel per calling
// process, so realpath(3) run by guard would give guard's own entries:
// "/dev/fd/3" (/dev/fd -> /proc/self/fd) would name guard's fd 3, not the
// tracee's. Walking the components here maps them to /proc/TID wherever
// they appear, directly or through a symlink. tid 0: guard's own view.
Status RealPath(pid_t tid, const std::string& root_prefix, const std::string& path, std::string* out) {
  std::vector<std::string> pending;
  PushComponents(path, &pending);
  std::string resolved;  // "" stands for "/"
  int links = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (name == ".") continue;
    if (name == "..") {
      resolved.erase(resolved.rfind('/') == std::string::npos ? 0 : resolved.rfind('/'));
      continue;
    }
    if (tid > 0 && resolved == "/proc" && (name == "self" || name == "thread-self")) {
      resolved = "/proc/" + std::to_string(tid);
      continue;
    }
    std::string next = resolved + "/" + name;
    struct stat st;
    if (lstat(next.c_str(), &st) != 0) return Status::FromErrno(next, errno);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) return Status::FromErrno(path, ELOOP);
      std::string target;
      GUARD_RETURN_IF_ERROR(ReadLink(next, &target));
      if (!target.empty() && target[0] == '/') resolved = root_prefix;
      PushComponents(target, &pending);
      continue;
    }
    if (!pending.empty() && !S_ISDIR(st.st_mode)) return Status::FromErrno(next, ENOTDIR);
    resolved = std::move(next);
  }
  *out = resolved.empty() ? "/" : resolved;
  return Status::Ok();
}

}  // namespace

Status TraceeFdPath(pid_t tid, int fd, std::string* out) {
  return ReadLink(Proc(tid, "fd/") + std::to_string(fd), out);
}

static Status ResolveAbsoluteFor(pid_t tid, const std::string& root_prefix, std::string full,
                                 bool follow_last, std::string* out) {
  // A trailing slash makes the kernel follow the last component (it must be
  // a directory).
  while (full.size() > 1 && full.back() == '/') {
    full.pop_back();
    follow_last = true;
  }
  for (int hops = 0; hops <= kMaxSymlinks; ++hops) {
    const std::filesystem::path split(full);
    const std::string parent = split.parent_path().string();
    const std::string last = split.filename().string();
    bool proc_self = tid > 0 && parent == "/proc" && (last == "self" || last == "thread-self");
    if (last.empty() || last == "." || last == ".." || proc_self) return RealPath(tid, root_prefix, full, out);
    std::string parent_real;
    GUARD_RETURN_IF_ERROR(RealPath(tid, root_prefix, parent, &parent_real));
    std::string candidate = parent_real == "/" ? "/" + last : parent_real + "/" + last;
    struct stat st;
    if (!follow_last || lstat(candidate.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *out = candidate;
      return Status::Ok();
    }
    if (IsProcFdLink(candidate)) {
      // A magic link leads to the open file, whatever its text says: to its
      // name (in guard's view: no root prefix) while the name holds it, else
      // the link itself stands for the file (mutation_resolver.h).
      FdLinkTarget file;
      GUARD_RETURN_IF_ERROR(FollowFdLink(candidate, &file));
      if (file.path.empty()) {
        *out = candidate;
        return Status::Ok();
      }
      full = std::move(file.path);
      continue;
    }
    std::string target;
    GUARD_RETURN_IF_ERROR(ReadLink(candidate, &target));
    if (!target.empty() && target[0] == '/') {
      full = root_prefix + target;
    } else {
      full = parent_real == "/" ? "/" + target : parent_real + "/" + target;
    }
    while (full.size() > 1 && full.back() == '/') full.pop_back();
  }
  return Status::FromErrno(full, ELOOP);
}

Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, std::string* out) {
  std::string root;
  GUARD_RETURN_IF_ERROR(ReadLink(Proc(tid, "root"), &root));
  std::string root_prefix = root == "/" ? "" : root;

  if (path.empty()) {
    if (!empty_path_ok) return Status::FromErrno("empty path", ENOENT);
    if (dirfd == AT_FDCWD) return ReadLink(Proc(tid, "cwd"), out);
    return TraceeFdPath(tid, dirfd, out);
  }
  std::string full;
  if (path[0] == '/') {
    full = root_prefix + path;
    // /proc/self means the tracee, not guard, which resolves these paths.
    for (std::string_view self : {"/proc/self", "/proc/thread-self"}) {
      if (root_prefix.empty() && PathIsUnder(path, self)) {
        full = "/proc/" + std::to_string(tid) + path.substr(self.size());
        break;
      }
    }
  } else {
    std::string base;
    if (dirfd == AT_FDCWD) {
      GUARD_RETURN_IF_ERROR(ReadLink(Proc(tid, "cwd"), &base));
    } else {
      GUARD_RETURN_IF_ERROR(TraceeFdPath(tid, dirfd, &base));
    }
    full = base == "/" ? "/" + path : base + "/" + path;
  }
  return ResolveAbsoluteFor(tid, root_prefix, full, follow_last, out);
}

}  // namespace guard
