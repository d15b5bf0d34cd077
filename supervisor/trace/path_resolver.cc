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
#include "common/unique_fd.h"
#include "supervisor/trace/directory_walk.h"
#include "supervisor/trace/fd_link.h"
#include "supervisor/trace/tracee_views.h"
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

// Whether `text`, a cwd or dirfd link target as guard reads it, can stand
// for that directory's canonical name unexamined: the kernel wrote it from
// the directory's dentries (no symlink, no "." or ".."), in guard's own
// view. A deleted directory's text ends in " (deleted)" and names nothing.
bool IsKernelName(const View& view, const std::string& text) {
  constexpr std::string_view kDeleted = " (deleted)";
  return view.IsGuards() && !text.empty() && text[0] == '/' &&
         !(text.size() >= kDeleted.size() &&
           text.compare(text.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0);
}

// The canonical name of directory `parent` (absolute, in view terms) as
// `tid` resolves it. `known`, if not empty, is a canonical name the kernel
// gave (IsKernelName): `parent` equal to it is taken as it is. Where the
// tracee resolves as guard does, the kernel walks it in one call (*fd then
// holds it open); otherwise, or when that walk does not apply, guard walks
// it component by component.
Status ResolveParent(pid_t tid, const View& view, const std::string& parent, const std::string& known,
                     std::string* real, UniqueFd* fd) {
  if (view.IsGuards()) {
    if (!known.empty() && parent == known) {
      *real = parent;
      return Status::Ok();
    }
    if (WalkDirectory(parent, fd, real)) return Status::Ok();
  }
  return RealPath(tid, view, parent, real);
}

// The lstat of `name` in directory `dir` (open, or else not valid: then of
// `path`, its full name).
KnownLstat LstatIn(const UniqueFd& dir, const std::string& name, const std::string& path) {
  if (!dir.valid()) return KnownLstat::Of(path);
  KnownLstat k;
  k.made = true;
  if (fstatat(dir.get(), name.c_str(), &k.st, AT_SYMLINK_NOFOLLOW) != 0) k.err = errno;
  return k;
}

// Resolves absolute (in view terms) `full`. `known`: see ResolveParent, for
// `full` as given (a symlink followed leads elsewhere). *lstat_out: the lstat
// of the result, where the tracee's view is guard's own (unmade otherwise).
Status ResolveInView(pid_t tid, const View& view, std::string full, bool follow_last, std::string known,
                     std::string* out, KnownLstat* lstat_out) {
  *lstat_out = KnownLstat();
  // A trailing slash makes the kernel follow the last component (it must be
  // a directory).
  while (full.size() > 1 && full.back() == '/') {
    full.pop_back();
    follow_last = true;
  }
  for (int hops = 0; hops <= kMaxSymlinks; ++hops, known.clear()) {
    const std::filesystem::path split(full);
    const std::string parent = split.parent_path().string();
    const std::string last = split.filename().string();
    bool proc_self = tid > 0 && parent == view.root + "/proc" && (last == "self" || last == "thread-self");
    if (last.empty() || last == "." || last == ".." || proc_self) return RealPath(tid, view, full, out);
    std::string parent_real;
    UniqueFd parent_fd;
    GUARD_RETURN_IF_ERROR(ResolveParent(tid, view, parent, known, &parent_real, &parent_fd));
    std::string candidate = parent_real == "/" ? "/" + last : parent_real + "/" + last;
    // In guard's own view the lstat is made whatever the call, for capture
    // (Mutation::abs_lstat); elsewhere only to follow the last component.
    KnownLstat l;
    if (view.IsGuards()) {
      l = LstatIn(parent_fd, last, candidate);
    } else if (follow_last) {
      l = KnownLstat::Of(view.At(candidate));
    }
    if (!follow_last || l.err != 0 || !S_ISLNK(l.st.st_mode)) {
      *out = candidate;
      if (view.IsGuards()) *lstat_out = l;
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

Status ViewOf(pid_t tid, TraceeViews* views, View* view) {
  return views != nullptr ? views->Get(tid, view) : ReadView(tid, view);
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
// Returns whether that is `in_view` itself.
bool ToGuardName(const View& view, const TreeAnchors* anchors, std::string in_view, std::string* out,
                 bool* foreign) {
  *foreign = false;
  if (!view.own_namespace) {
    // The same object by another name of guard's own: a bind mount of the
    // root or of a directory above it made before the session.
    if (anchors != nullptr && !anchors->CoversByName(in_view) && anchors->Find("", in_view, out)) {
      return *out == in_view;
    }
    *out = std::move(in_view);
    return true;
  }
  if (anchors != nullptr && anchors->Find(view.prefix, in_view, out)) return false;
  *foreign = true;
  *out = std::move(in_view);
  return true;
}

}  // namespace

Status TraceeFdPath(pid_t tid, int fd, std::string* out) {
  return ReadLink(Proc(tid, "fd/") + std::to_string(fd), out);
}

Status MapTraceeName(pid_t tid, const ResolveContext& ctx, std::string* path, bool* foreign) {
  *foreign = false;
  if (path->empty() || (*path)[0] != '/') return Status::Ok();
  View view;
  GUARD_RETURN_IF_ERROR(ViewOf(tid, ctx.views, &view));
  ToGuardName(view, ctx.anchors, BaseInView(view, *path), path, foreign);
  return Status::Ok();
}

Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, const ResolveContext& ctx, ResolvedPath* out) {
  *out = ResolvedPath();
  View view;
  GUARD_RETURN_IF_ERROR(ViewOf(tid, ctx.views, &view));

  std::string resolved;
  KnownLstat lstat;
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
    std::string full, known;
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
      if (IsKernelName(view, base)) known = base;
      full = base == "/" ? "/" + path : base + "/" + path;
    }
    GUARD_RETURN_IF_ERROR(ResolveInView(tid, view, full, follow_last, known, &resolved, &lstat));
  }
  if (ToGuardName(view, ctx.anchors, std::move(resolved), &out->abs, &out->foreign)) out->lstat = lstat;
  return Status::Ok();
}

Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, std::string* out, const TreeAnchors* anchors,
                         bool* foreign) {
  ResolveContext ctx;
  ctx.anchors = anchors;
  ResolvedPath r;
  Status s = ResolveTraceePath(tid, dirfd, path, follow_last, empty_path_ok, ctx, &r);
  if (!s.ok()) return s;
  *out = std::move(r.abs);
  if (foreign != nullptr) *foreign = r.foreign;
  return Status::Ok();
}

}  // namespace guard
