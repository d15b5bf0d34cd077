// A tracee's view of the filesystem, which its paths are resolved in: its
// root (a chroot's jail, or "/") and whether it shares guard's mount
// namespace. Reading them costs two readlinks of /proc/TID per resolved
// call; they change only by chroot, pivot_root, unshare and setns, which the
// filter stops for this reason (seccomp_filter.cc) and which change nothing
// guard records. TraceeViews keeps each thread's view from one call to the
// next, and keeps nothing while one of those calls may be running.
//
// Invariant: a kept view was read after the last view-changing call of any
// tracee had ended. ChangeBegins (the call's seccomp stop) drops every kept
// view and stops keeping; Stopped (that thread's next stop of any kind,
// which it reaches only once the call has returned) or its exit resumes
// keeping. Every tracee is covered, not only the caller: chroot changes the
// root of every thread sharing the caller's fs_struct, pivot_root that of
// every process whose root was the old one. A clone with CLONE_NEWNS makes a
// new thread id, which has no kept view. A thread id ends (Forget) at exit.
#pragma once

#include <sys/types.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/status.h"

namespace guard {

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
  // Whether the tracee resolves names exactly as guard does (guard's
  // mount namespace, root "/"), /proc/self aside.
  bool IsGuards() const { return !own_namespace && root.empty(); }
};

// Reads the view of `tid` from /proc/TID (root, ns/mnt).
Status ReadView(pid_t tid, View* view);

// The session's own mount namespace (state_isolation.h: guard's mounts and
// a read-only bind of the state directory over itself), given as the text
// of /proc/PID/ns/mnt: names there are guard's names, so a tracee in it is
// taken as in guard's own, until a tracee makes a mount call
// (ForgetSessionNamespace). Thread-safe.
void SetSessionNamespace(const std::string& ns_link);
void ForgetSessionNamespace();

// Whether syscall `nr` (the native ABI's number) may change the view of any
// tracee: chroot, pivot_root, unshare, setns, and the mount calls (a mount
// in the session's namespace is not guard's).
bool IsViewChange(long nr);
bool IsMountCall(long nr);

class TraceeViews {
 public:
  // The view of `tid`: the one kept from an earlier call, or read now (and
  // kept unless a view-changing call may be running).
  Status Get(pid_t tid, View* out);
  // `tid` is stopped entering a view-changing call (IsViewChange).
  void ChangeBegins(pid_t tid);
  // `tid` stopped: it is inside no call.
  void Stopped(pid_t tid) {
    if (!changing_.empty()) changing_.erase(tid);
  }
  // `tid` exited (or its id was taken over by an exec of another thread).
  void Forget(pid_t tid);

  size_t kept() const { return kept_.size(); }

 private:
  std::unordered_map<pid_t, View> kept_;
  // Threads stopped entering a view-changing call, not stopped since.
  std::unordered_set<pid_t> changing_;
};

}  // namespace guard
