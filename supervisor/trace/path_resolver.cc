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
#include "supervisor/trace/tree_anchors.h"

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

// Where the components of a tracee's path are examined from guard, and the
// tracee's root there. The kernel walks a path in the caller's mount
// namespace and stops `..` at the caller's root; guard walks it the same way:
//  - a tracee in guard's own mount namespace: guard's names (prefix ""),
//    the root being /proc/TID/root's target ("" for "/"; a chroot's jail
//    otherwise);
//  - a tracee in a mount namespace of its own (`unshare -m`, bubblewrap):
//    through the magic link /proc/TID/root, which the kernel follows into
//    the tracee's mounts, so that a bind mount made there is seen; names are
//    then the tracee's, its root "".
struct View {
  std::string prefix;  // guard examines prefix + name
  std::string root;    // "" stands for "/"
  bool own_namespace = false;
  std::string root_link;  // /proc/TID/root's target, as guard reads it
  std::string At(const std::string& name) const { return prefix + (name.empty() ? "/" : name); }
};

bool SameMountNamespace(pid_t tid) {
  static const std::string self = [] {
    std::string ns;
    return ReadLink("/proc/self/ns/mnt", &ns).ok() ? ns : std::string();
  }();
  std::string ns;
  // Unreadable: take guard's view, as before namespaces were looked at.
  if (self.empty() || !ReadLink(Proc(tid, "ns/mnt"), &ns).ok()) return true;
  return ns == self;
}

// realpath(3) of the absolute (in view terms) `path` as tracee `tid` would
// resolve it. /proc/self and /proc/thread-self are resolved by the kernel per
// calling process, so realpath(3) run by guard would give guard's own entries:
// "/dev/fd/3" (/dev/fd -> /proc/self/fd) would name guard's fd 3, not the
// tracee's. Walking the components here maps them to /proc/TID wherever
// they appear, directly or through a symlink. tid 0: guard's own view.
Status RealPath(pid_t tid, const View& view, const std::string& path, std::string* out) {
  std::vector<std::string> pending;
  PushComponents(path, &pending);
  std::string resolved;  // "" stands for "/"
  int links = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (name == ".") continue;
    if (name == "..") {
      // The kernel never climbs above the process's root (a chroot's jail).
      if (resolved == view.root) continue;
      resolved.erase(resolved.rfind('/') == std::string::npos ? 0 : resolved.rfind('/'));
      continue;
    }
    if (tid > 0 && resolved == view.root + "/proc" && (name == "self" || name == "thread-self")) {
      resolved = view.root + "/proc/" + std::to_string(tid);
      continue;
    }
    std::string next = resolved + "/" + name;
    struct stat st;
    if (lstat(view.At(next).c_str(), &st) != 0) return Status::FromErrno(next, errno);
    if (S_ISLNK(st.st_mode)) {
      if (++links > kMaxSymlinks) return Status::FromErrno(path, ELOOP);
      std::string target;
      GUARD_RETURN_IF_ERROR(ReadLink(view.At(next), &target));
      if (!target.empty() && target[0] == '/') resolved = view.root;
      PushComponents(target, &pending);
      continue;
    }
    if (!pending.empty() && !S_ISDIR(st.st_mode)) return Status::FromErrno(next, ENOTDIR);
    resolved = std::move(next);
  }
  *out = resolved.empty() ? "/" : resolved;
  return Status::Ok();
}

Status ResolveInView(pid_t tid, const View& view, std::string full, bool follow_last, std::string* out) {
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
    bool proc_self = tid > 0 && parent == view.root + "/proc" && (last == "self" || last == "thread-self");
    if (last.empty() || last == "." || last == ".." || proc_self) return RealPath(tid, view, full, out);
    std::string parent_real;
    GUARD_RETURN_IF_ERROR(RealPath(tid, view, parent, &parent_real));
    std::string candidate = parent_real == "/" ? "/" + last : parent_real + "/" + last;
    struct stat st;
    if (!follow_last || lstat(view.At(candidate).c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
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
    GUARD_RETURN_IF_ERROR(ReadLink(view.At(candidate), &target));
    if (!target.empty() && target[0] == '/') {
      full = view.root + target;
    } else {
      full = parent_real == "/" ? "/" + target : parent_real + "/" + target;
    }
    while (full.size() > 1 && full.back() == '/') full.pop_back();
  }
  return Status::FromErrno(full, ELOOP);
}

// The view a call of `tid` is resolved in, and `base` (the target of its
// cwd or dirfd link, as guard reads it) in that view's names.
Status ViewOf(pid_t tid, View* view) {
  GUARD_RETURN_IF_ERROR(ReadLink(Proc(tid, "root"), &view->root_link));
  if (SameMountNamespace(tid)) {
    view->root = view->root_link == "/" ? "" : view->root_link;
    return Status::Ok();
  }
  view->own_namespace = true;
  view->prefix = Proc(tid, "root");
  return Status::Ok();
}

// A cwd or dirfd link target in `view`'s names. In a namespace of its own
// the kernel gives it relative to that namespace's top, as it gives the
// root link: the part below the root is the tracee's name. (A cwd outside
// a chroot in such a namespace has no name from the root: it is taken from
// that top, which the kernel would let `..` climb to anyway.)
std::string BaseInView(const View& view, const std::string& link) {
  const std::string& root = view.root_link;
  if (!view.own_namespace || root == "/") return link;
  if (PathIsUnder(link, root)) return link.size() == root.size() ? "/" : link.substr(root.size());
  return link;
}

// The resolved name `in_view` as guard names it (see Mutation::foreign).
void ToGuardName(const View& view, const TreeAnchors* anchors, std::string in_view, std::string* out,
                 bool* foreign) {
  *foreign = false;
  if (!view.own_namespace) {
    // The same object by another name of guard's own: a bind mount of the
    // root or of a directory above it made before the session.
    if (anchors != nullptr && !anchors->CoversByName(in_view) && anchors->Find("", in_view, out)) return;
    *out = std::move(in_view);
    return;
  }
  if (anchors != nullptr && anchors->Find(view.prefix, in_view, out)) return;
  *foreign = true;
  *out = std::move(in_view);
}

}  // namespace

Status TraceeFdPath(pid_t tid, int fd, std::string* out) {
  return ReadLink(Proc(tid, "fd/") + std::to_string(fd), out);
}

Status MapTraceeName(pid_t tid, const TreeAnchors* anchors, std::string* path, bool* foreign) {
  *foreign = false;
  if (path->empty() || (*path)[0] != '/') return Status::Ok();
  View view;
  GUARD_RETURN_IF_ERROR(ViewOf(tid, &view));
  ToGuardName(view, anchors, BaseInView(view, *path), path, foreign);
  return Status::Ok();
}

Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, std::string* out, const TreeAnchors* anchors,
                         bool* foreign) {
  bool foreign_unused = false;
  if (foreign == nullptr) foreign = &foreign_unused;
  *foreign = false;
  View view;
  GUARD_RETURN_IF_ERROR(ViewOf(tid, &view));

  std::string resolved;
  if (path.empty()) {
    if (!empty_path_ok) return Status::FromErrno("empty path", ENOENT);
    std::string base;
    if (dirfd == AT_FDCWD) {
      GUARD_RETURN_IF_ERROR(ReadLink(Proc(tid, "cwd"), &base));
    } else {
      GUARD_RETURN_IF_ERROR(TraceeFdPath(tid, dirfd, &base));
    }
    resolved = BaseInView(view, base);
  } else {
    std::string full;
    if (path[0] == '/') {
      full = view.root + path;
      // /proc/self means the tracee, not guard, which resolves these paths.
      for (std::string_view self : {"/proc/self", "/proc/thread-self"}) {
        if (view.root.empty() && PathIsUnder(path, self)) {
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
      base = BaseInView(view, base);
      full = base == "/" ? "/" + path : base + "/" + path;
    }
    GUARD_RETURN_IF_ERROR(ResolveInView(tid, view, full, follow_last, &resolved));
  }
  ToGuardName(view, anchors, std::move(resolved), out, foreign);
  return Status::Ok();
}

}  // namespace guard
