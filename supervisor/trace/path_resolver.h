// Resolves a path argument of a stopped tracee to the absolute path of the
// object the kernel will act on: relative to the dirfd (/proc/TID/fd/N) or
// the cwd (/proc/TID/cwd), under the process's root (/proc/TID/root), with
// every symlink in the middle followed, and the final component followed
// only when the syscall follows it (open without O_NOFOLLOW, chmod, truncate);
// rename, unlink, rmdir, mkdir, symlink and link act on the link itself.
//
// The result is computed from guard's view of the filesystem an instant
// before the kernel's: another process could change a directory in between.
// That race is inherent to ptrace-based capture and is documented.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"
#include "supervisor/base/stat_state.h"

namespace guard {

class TraceeViews;
class TreeAnchors;

// What a resolution may use besides the tracee's /proc entries.
struct ResolveContext {
  // Maps a name that reaches the root or the state directory another way
  // (a bind mount, before the session or inside it) to its name below them
  // (tree_anchors.h).
  const TreeAnchors* anchors = nullptr;
  // Each tracee's view (root, mount namespace) kept from call to call
  // (tracee_views.h); nullptr: read afresh for every resolution.
  TraceeViews* views = nullptr;
  // The session's processes have a /dev/shm of their own (state_isolation.h),
  // though their mount namespace is otherwise taken as guard's: a name guard
  // finds under /dev/shm is looked at again through the tracee's root
  // (mutation_resolver.cc).
  bool private_shm = false;
};

// A path as guard names it.
struct ResolvedPath {
  std::string abs;
  // A name in the tracee's mount namespace that is not one of guard's (it
  // reaches no anchor).
  bool foreign = false;
  // The lstat of `abs`, made as the last step of the resolution where the
  // tracee's view is guard's own (unmade otherwise).
  KnownLstat lstat;
};

//
// `..` stops at the process's root, as in the kernel (a chroot's jail). A
// tracee in a mount namespace of its own is resolved in its mounts (through
// /proc/TID/root).
//
// Cost: where the tracee's view is guard's own (its mount namespace, root
// "/"), a path's directory is opened by the kernel in one openat2
// (directory_walk.h), and one naming nothing but the cwd or dirfd is taken
// as the kernel names that directory; elsewhere (a chroot, a mount
// namespace of its own, a magic link or /proc/self on the way) each
// component is examined with an lstat, which is also how every error the
// kernel will give is found.
Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, const ResolveContext& ctx, ResolvedPath* out);
// The same with no kept views: *out the name, *foreign (if given) as above.
Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, std::string* out, const TreeAnchors* anchors = nullptr,
                         bool* foreign = nullptr);
// The path an open fd of the tracee refers to (readlink /proc/TID/fd/FD).
Status TraceeFdPath(pid_t tid, int fd, std::string* out);
// Maps *path, an absolute name TraceeFdPath gave, as ResolveTraceePath maps
// its result (ctx.anchors, *foreign); a name that is no path stays as it is.
Status MapTraceeName(pid_t tid, const ResolveContext& ctx, std::string* path, bool* foreign);

}  // namespace guard
