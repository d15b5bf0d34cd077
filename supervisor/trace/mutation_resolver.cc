#include "supervisor/trace/mutation_resolver.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/path_util.h"
#include "supervisor/trace/fd_link.h"
#include "supervisor/trace/path_resolver.h"
#include "supervisor/trace/tree_anchors.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

bool HasOverlongName(const std::string& path) {
  size_t start = 0;
  for (size_t slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1) {
    if (slash - start > NAME_MAX) return true;
  }
  return path.size() - start > NAME_MAX;
}

bool FollowsLast(const MutationRequest& req) {
  switch (req.action) {
    case Action::kOpen:
      if (req.flags & O_NOFOLLOW) return false;
      return !((req.flags & O_CREAT) && (req.flags & O_EXCL));
    case Action::kTruncate:
      return true;
    case Action::kChmod:
    case Action::kChown:
    case Action::kSetAcl:
      return !(req.flags & AT_SYMLINK_NOFOLLOW);
    case Action::kLink:
      return (req.flags & AT_SYMLINK_FOLLOW) != 0;
    default:
      return false;  // rename, unlink, rmdir, mkdir, symlink, mknod act on the link
  }
}

// Calls that take an empty path with AT_EMPTY_PATH to mean the dirfd itself.
bool TakesEmptyPath(Action a) {
  return a == Action::kLink || a == Action::kChmod || a == Action::kChown || a == Action::kSetAcl;
}

// A failure to resolve: benign when the kernel fails the call the same way,
// else a capture failure (guard names files by absolute path, which can
// exceed PATH_MAX where the tracee's path, relative to a dirfd, does not).
// `unknowable`: the call will not fail by itself, and guard cannot tell what
// it changes (ResolveSeeingPrivateShm): the capture-failure policy decides.
void Unresolved(const MutationRequest& req, const Status& s, Mutation* out, bool unknowable = false) {
  out->resolve_error = s;
  bool too_long_for_guard = s.err() == ENAMETOOLONG && !HasOverlongName(req.path) &&
                            !HasOverlongName(req.path2);
  out->refuse_errno = too_long_for_guard ? ENAMETOOLONG : unknowable ? EPERM : 0;
}

// fchmod, ftruncate, and the *at calls given AT_EMPTY_PATH with an fd: they
// act on an open file, not on a name.
// Calls on an fd rather than a path.
bool ActsOnFdItself(Action a) {
  return a == Action::kFtruncate || a == Action::kFchmod || a == Action::kFchown || a == Action::kFsetAcl;
}

bool ActsOnFd(const MutationRequest& req) {
  if (ActsOnFdItself(req.action)) return true;
  return req.path.empty() && req.dirfd != AT_FDCWD && (req.flags & AT_EMPTY_PATH) && TakesEmptyPath(req.action);
}

// Whether the open file `st` behind `link` (/proc/TID/fd/N), which no name
// of guard's holds, lies on the tracee's own /dev/shm (state_isolation.h: a
// tmpfs made for the session, holding its ring), whose names guard does not
// see: then *text is its name there, which can be no name under the root.
// Not when the tracee's /dev/shm is guard's, nor on the device of an anchor
// (the root, the state directory, a directory above them: a tmpfs of the
// tree's bound there by the session).
bool OnPrivateShm(const std::string& link, const struct stat& st, const ResolveContext& ctx, std::string* text) {
  const size_t fd_at = link.rfind("/fd/");
  if (fd_at == std::string::npos) return false;
  struct stat theirs {}, ours {};
  if (stat((link.substr(0, fd_at) + "/root/dev/shm").c_str(), &theirs) != 0 || stat("/dev/shm", &ours) != 0) {
    return false;
  }
  if (theirs.st_dev == ours.st_dev || st.st_dev != theirs.st_dev) return false;
  if (ctx.anchors != nullptr && ctx.anchors->HoldsDevice(st.st_dev)) return false;
  char buf[PATH_MAX];
  ssize_t n = readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return false;
  text->assign(buf, static_cast<size_t>(n));
  return text->rfind("/dev/shm/", 0) == 0;
}

// Sets out->abs from magic link `link` (fd_link.h): the file's name when it
// still has one, else the link itself with out->unnamed. Pipes, sockets and
// anonymous inodes come out unnamed too; capture lets calls on them run.
Status ResolveFdLink(const std::string& link, const ResolveContext& ctx, Mutation* out) {
  FdLinkTarget target;
  GUARD_RETURN_IF_ERROR(FollowFdLink(link, &target));
  out->abs_lstat = KnownLstat();
  if (!target.path.empty()) {
    out->abs = std::move(target.path);
    out->abs_lstat.made = true;
    out->abs_lstat.st = target.named;
    return Status::Ok();
  }
  if (std::string text; OnPrivateShm(link, target.st, ctx, &text)) {
    out->abs = std::move(text);
    out->foreign = true;
    return Status::Ok();
  }
  out->abs = link;
  // Not a name at all (a /proc link, which the resolver may have taken for
  // a foreign one): capture names the file by its inode.
  out->foreign = false;
  out->unnamed = true;
  out->unnamed_st = target.st;
  return Status::Ok();
}

// MapTraceeName of out->abs. The lstat ResolveFdLink made of it stands only
// for a name guard examined as its own: one the mapping left as it was, and
// not a foreign one (the tracee's own mount namespace).
Status MapName(pid_t tid, const ResolveContext& ctx, Mutation* out) {
  std::string before = out->abs;
  GUARD_RETURN_IF_ERROR(MapTraceeName(tid, ctx, &out->abs, &out->foreign));
  if (out->abs != before || out->foreign) out->abs_lstat = KnownLstat();
  return Status::Ok();
}

// ResolveTraceePath, seeing the session's own /dev/shm (ctx.private_shm):
// guard walked a name there through guard's /dev/shm, not the tracee's. The
// kernel looks at it again through the tracee's root: what the call acts on
// (the name, or where it leads when the call follows it), or the directory
// a new name would go into, must be on that tmpfs, which holds nothing of
// the tree's; then the name is the tracee's own (foreign). Anything else (a
// symlink of the session's there that leads out of it, into the tree) is a
// name guard cannot tell, which the capture-failure policy decides
// (*leads_out; `EPERM` under block).
Status ResolveSeeingPrivateShm(pid_t tid, int dirfd, const std::string& path, bool follow_last, bool empty_ok,
                               const ResolveContext& ctx, ResolvedPath* r, bool* leads_out) {
  *leads_out = false;
  Status resolved = ResolveTraceePath(tid, dirfd, path, follow_last, empty_ok, ctx, r);
  if (!ctx.private_shm) return resolved;
  const std::string proc = "/proc/" + std::to_string(tid);
  // Where the kernel looks: the name guard found, when under /dev/shm; the
  // tracee's own path, when guard found none (a directory of the session's
  // /dev/shm on the way is none of guard's).
  std::string at;
  if (resolved.ok()) {
    if (!PathIsUnder(r->abs, "/dev/shm")) return resolved;
    at = proc + "/root" + r->abs;
  } else if (path.empty() || (resolved.err() != ENOENT && resolved.err() != ENOTDIR)) {
    return resolved;  // not a name missing from guard's view
  } else if (path[0] == '/') {
    at = proc + "/root" + path;
  } else {
    at = proc + (dirfd == AT_FDCWD ? std::string("/cwd") : "/fd/" + std::to_string(dirfd)) + "/" + path;
  }
  struct stat shm {}, st {};
  if (stat((proc + "/root/dev/shm").c_str(), &shm) != 0) return Status::FromErrno(proc + "/root/dev/shm", errno);
  int rc = follow_last ? stat(at.c_str(), &st) : lstat(at.c_str(), &st);
  if (rc != 0 && errno == ENOENT && lstat(at.c_str(), &st) != 0 && errno == ENOENT) {
    rc = stat(ParentDir(at).c_str(), &st);  // a new name: where it goes
  }
  // Nothing there for the kernel either: the call fails by itself.
  if (rc != 0 && !resolved.ok()) return resolved;
  if (rc != 0 || st.st_dev != shm.st_dev || (ctx.anchors != nullptr && ctx.anchors->HoldsDevice(st.st_dev))) {
    *leads_out = true;
    return Status::FromErrno(path + ": a name in the session's own /dev/shm that leads out of it", EXDEV);
  }
  if (!resolved.ok()) r->abs = at;
  r->foreign = true;
  r->lstat = KnownLstat();
  return Status::Ok();
}

}  // namespace

void ResolveMutation(pid_t tid, const MutationRequest& req, const Status& decode, Mutation* out,
                     const ResolveContext& ctx) {
  *out = Mutation();
  out->tid = tid;
  out->req = req;
  if (!decode.ok()) {
    // The call's arguments could not be read: guard cannot tell what it
    // would change. (A bad pointer fails in the kernel with EFAULT too; a
    // pointer that another thread unmaps in between does not, so this is
    // never taken as harmless.)
    out->resolve_error = decode;
    out->refuse_errno = decode.err() == EFAULT || decode.err() == ENAMETOOLONG ? decode.err() : EIO;
    return;
  }
  Status s;
  if (ActsOnFd(req)) {
    int fd = ActsOnFdItself(req.action) ? req.fd : req.dirfd;
    s = ResolveFdLink("/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd), ctx, out);
    if (!s.ok()) return Unresolved(req, s, out);
    if (!out->unnamed) {
      s = MapName(tid, ctx, out);
      if (!s.ok()) return Unresolved(req, s, out);
    }
  } else {
    bool empty_ok = (req.flags & AT_EMPTY_PATH) != 0 && TakesEmptyPath(req.action);
    ResolvedPath r;
    bool leads_out = false;
    s = ResolveSeeingPrivateShm(tid, req.dirfd, req.path, FollowsLast(req), empty_ok, ctx, &r, &leads_out);
    if (!s.ok()) return Unresolved(req, s, out, leads_out);
    out->abs = std::move(r.abs);
    out->foreign = r.foreign;
    out->abs_lstat = r.lstat;
    // The path led to a magic link the resolver could not name: the call
    // acts on that open file.
    if (FollowsLast(req) && IsProcFdLink(out->abs)) {
      std::string link = out->abs;
      s = ResolveFdLink(link, ctx, out);
      if (!s.ok()) return Unresolved(req, s, out);
      if (!out->unnamed) {
        s = MapName(tid, ctx, out);
        if (!s.ok()) return Unresolved(req, s, out);
      }
    }
  }
  if (req.action == Action::kRename || req.action == Action::kLink) {
    out->has2 = true;
    ResolvedPath r;
    bool leads_out = false;
    s = ResolveSeeingPrivateShm(tid, req.dirfd2, req.path2, false, false, ctx, &r, &leads_out);
    if (!s.ok()) return Unresolved(req, s, out, leads_out);
    out->abs2 = std::move(r.abs);
    out->foreign2 = r.foreign;
    out->abs2_lstat = r.lstat;
  }
}

}  // namespace guard
