// Hides guard's state directory from the command: the command runs in a
// user and mount namespace of its own in which $GUARD_HOME is a read-only
// bind mount of itself, so that no call of the session's, from the shim's
// stub or from anywhere else, can rewrite or delete the journal or the store
// (docs/security.md, "The state directory, out of the session's reach").
//
// Two levels, because the mounts a namespace's owner makes there are its
// to undo: the child enters namespace A (its maps written by the
// supervisor, outside), makes the read-only bind, then enters B inside A
// (its maps written by a helper process left in A). In B the bind is a
// mount inherited from a more privileged namespace: locked, so even the
// root of B cannot unmount it, remount it writable, or bind the directory
// above it without it (the kernel refuses with EINVAL or EPERM). The user's
// own ids are mapped to themselves (all ids, for root), so files, owners
// and permissions look as they do outside.
//
// With `ring` (the shim's ring segment, a name in /dev/shm), namespace A
// also gets a private tmpfs on /dev/shm holding a bind of that one segment
// at its own name: no other session's ring is reachable from the command,
// and a process that closes its inherited fds still finds its own by name.
// The segment itself stays in the host's /dev/shm, where recovery finds it
// if guard dies.
//
// What it costs, and where the kernel refuses it, is in docs/security.md.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class StateIsolation {
 public:
  // What the child and the supervisor need, made before the fork (the
  // child may then make async-signal-safe calls only). `state_dir` is
  // absolute and canonical.
  // `required`: a kernel that refuses the namespaces fails the launch.
  // `also`: another directory made read-only the same way (guard's
  // configuration directory), if it exists. `ring`: the name of the shim's
  // ring segment in /dev/shm, the one segment the command's /dev/shm holds
  // ("": /dev/shm is left as it is).
  static StateIsolation For(const std::string& state_dir, bool required, const std::string& also = "",
                            const std::string& ring = "");
  bool wanted() const { return wanted_; }
  // Under the tracer (auto): the inboxes of every session are hidden from
  // the command by an empty read-only tmpfs over `inbox_root`, made in
  // namespace B; the command reaches its own inbox only through the
  // directory fd `fd` it inherits (opened in B before the cover, so on the
  // same mount as the tree: the shim's link(2) into it works; docs/shim.md,
  // "The inbox by fd"). Not under preload: a process that closes its
  // inherited fds (Python's subprocess) would have no inbox, and no tracer
  // to take its calls.
  void HideInboxes(const std::string& inbox_root, const std::string& own_inbox, int fd) {
    inbox_root_ = inbox_root;
    own_inbox_ = own_inbox;
    inbox_fd_ = fd;
  }

  StateIsolation(StateIsolation&&) = default;
  StateIsolation& operator=(StateIsolation&&) = default;

  // The two pipes between the child and the supervisor (close-on-exec).
  Status OpenChannel();
  // In the supervisor, once the fork has happened (or failed): closes its
  // copies of the child's ends, so that a child that dies is an EOF.
  void CloseChildEnds();

  // In the forked child, before exec. 0: isolated. A positive errno: the
  // kernel refused the first namespace (nothing changed; the child goes on
  // as it is, and the supervisor says so). -1: a later step failed and the
  // child must not run the command (it has written why on stderr).
  int EnterInChild() const;

  // In the supervisor, after the fork: answers the child (writes namespace
  // A's maps). *isolated says whether the child is isolated; *refused the
  // errno of a refusal (0 otherwise). An error: the child ended or failed.
  Status Serve(pid_t child, bool* isolated, int* refused);

 private:
  bool wanted_ = false;
  bool root_ = false;
  bool required_ = false;
  std::string state_dir_;
  std::string also_;
  std::string uid_map_, gid_map_;
  std::string ring_path_;  // /dev/shm/<ring>, or ""
  std::string inbox_root_, own_inbox_;  // HideInboxes, or ""
  int inbox_fd_ = -1;
  // In namespace A: a private tmpfs on /dev/shm with the ring bound into it.
  int KeepOnlyTheRing() const;
  // In namespace B: the own inbox's fd at inbox_fd_, then the cover.
  int CoverTheInboxes() const;
  // Child -> supervisor: a Message. Supervisor -> child: one byte, go.
  UniqueFd from_child_, child_out_;
  UniqueFd to_child_, child_in_;

 public:
  StateIsolation() = default;
};

}  // namespace guard
