// The vocabulary between a producer of capture events and the capture
// logic. A producer (the tracer today, the shim's ring consumer next) sees a
// call that may change a file before the kernel runs it, describes it as a
// Mutation (what is asked, on which absolute paths, by which thread), and
// hands it to a MutationSink, which decides whether the call may proceed and
// records what the undo log must hold first. The producer later reports the
// call's result, or only that it has returned, or that the thread died
// inside it, by thread id: a thread is inside at most one call at a time.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/base/stat_state.h"

namespace guard {

// A file-changing call as asked, with its raw (unresolved) arguments.
struct MutationRequest {
  enum class Action {
    kOpen,       // open/openat/openat2/creat with write, create or truncate flags
    kTruncate,   // truncate(path)
    kFtruncate,  // ftruncate(fd)
    kRename,     // rename/renameat/renameat2
    kUnlink,     // unlink, unlinkat without AT_REMOVEDIR
    kRmdir,      // rmdir, unlinkat with AT_REMOVEDIR
    kMkdir,
    kSymlink,    // path = link path, target = text
    kLink,       // path = existing, path2 = new name
    kChmod,      // chmod, fchmodat, fchmodat2
    kFchmod,     // fchmod(fd)
    kMknod,
    // Calls that change permission bits as a side effect (they change
    // something guard does not keep: owner, ACL), recorded as a chmod.
    kChown,    // chown, lchown, fchownat: clears set-uid, set-gid of a non-directory
    kFchown,   // fchown(fd)
    kSetAcl,   // setxattr, lsetxattr, setxattrat of system.posix_acl_access
    kFsetAcl,  // fsetxattr(fd) of it
  };
  Action action = Action::kOpen;
  const char* syscall = "";
  int dirfd = -100;  // AT_FDCWD
  std::string path;
  int dirfd2 = -100;
  std::string path2;
  std::string target;   // kSymlink
  int fd = -1;          // kFtruncate, kFchmod, kFchown, kFsetAcl
  uint64_t flags = 0;   // open flags, renameat2 flags, *at flags
  uint32_t mode = 0;    // open/mkdir/mknod/chmod mode; kSetAcl, kFsetAcl: the
                        // permission bits the ACL sets, or kAclModeUnknown
};

// An ACL guard could not read the permission bits of (kSetAcl, kFsetAcl).
constexpr uint32_t kAclModeUnknown = 0xffffffffu;

// A request with the objects it acts on resolved, as the producer sees them
// in the calling process's view of the filesystem.
struct Mutation {
  pid_t tid = 0;
  // The calling process's name when the producer knows it (the shim sends
  // it); empty: capture reads /proc/TID/comm.
  std::string comm;
  MutationRequest req;
  // Ok when the paths below are known. Otherwise why not, and:
  //  - refuse_errno == 0: the call fails the same way by itself (a missing
  //    parent, a name longer than NAME_MAX, a pipe's fd): it runs unrecorded;
  //  - refuse_errno != 0: a capture failure (a path too long for guard's
  //    absolute form, arguments guard could not read): it follows the
  //    capture-failure policy, and a refused call fails with refuse_errno.
  Status resolve_error;
  int refuse_errno = 0;
  std::string abs;   // absolute, symlinks resolved as the call resolves them
  std::string abs2;  // the second path of a rename or link
  bool has2 = false;
  // abs (abs2) is a name in the calling process's own mount namespace that
  // is not guard's, and reaches neither the root nor the state directory
  // (the producer checked by device and inode): outside, whatever it reads.
  bool foreign = false, foreign2 = false;
  // The call acts on an open file that has no name of its own any more (it
  // was deleted, or never had one: O_TMPFILE), reached through an fd or a
  // /proc/PID/fd/N link: `abs` is that link, `unnamed_st` the file's inode.
  // st_nlink 0: no name left anywhere; more: names guard must find itself
  // (another hard link, or the store's, for a file adopted when deleted).
  bool unnamed = false;
  struct stat unnamed_st {};
  // The lstat of abs (abs2) the producer made as it resolved it, in this
  // stop, when it made one; capture then makes no other. Left unmade by a
  // producer that did not make it, or when abs is not the name it examined.
  KnownLstat abs_lstat, abs2_lstat;
  // Saved by a producer that reports the call only once it has run (the
  // shim, through the ring: supervisor/session/shim_feed.h): what the paths
  // held, taken before the call, so that capture reads nothing of the tree
  // for it. abs_lstat and abs2_lstat are then the producer's too.
  // The producer can hold the call before it runs (Verdict::wait_for,
  // retry_later); how long it has held it so far.
  bool holdable = false;
  int64_t held_ns = 0;
  struct PreCaptured {
    bool present = false;
    std::string target, target2;    // the symlink texts abs (abs2) held
    std::string pending, pending2;  // their content, in the store's pending directory
    // abs's content itself, carried in the record (a small file the shim
    // read into its CALL: docs/ring.md, "Inline pre-images"); pending is
    // then empty.
    bool has_content = false;
    std::string content;
  } pre;
};

// How long a producer holds a call at most, all holds together
// (Verdict::wait_for, retry_later): past it, Before lets the call go on
// without waiting for what it waited for (its thread may be stopped, or
// blocked in a call of its own).
constexpr int64_t kHoldLimitNs = 1000 * 1000 * 1000;

// What the producer must do with the call.
struct Verdict {
  int deny_errno = 0;       // non-zero: skip the call, make it return -deny_errno
  bool watch_exit = false;  // report the call's result (MutationSink::After)
  // The sink learns the outcome itself: the producer need not stop at the
  // call's exit, only report (MutationSink::Returned) that the thread is
  // past it, at its next stop of any kind or its exit, before it hands
  // over anything else of that thread.
  bool settle_later = false;
  // Non-zero: thread `wait_for`, in a recorded call on one of the same
  // names, has not yet been seen past it. The producer holds this call, not
  // run, until that thread's call has ended (After, Returned or Abandon of
  // it), then hands it to Before again: two threads' calls on one name then
  // run in the order of their records, and the second's pre-image is what
  // the first left (Capture::Before). Only a producer that can hold a call
  // (the tracer) gets it: Mutation::holdable.
  pid_t wait_for = 0;
  // The producer holds this call, not run, and hands it to Before again
  // shortly (a fraction of a millisecond later), with Mutation::held_ns
  // telling how long it has held it: something it must follow is not
  // delivered yet (FedSink::Before). Only for a holdable call.
  bool retry_later = false;
};

// A change a producer saw only after it had happened (watch mode: an
// inotify or FSEvents event and the producer's own look at the path). There
// is no call to hold or refuse, and no verdict: the pre-image is the last
// state the producer saved of the path, and the new state is the one it
// saved now. Both carry their content by key (BlobRef::kKey), already in the
// store. Capture::Observed records it as the operation it amounts to and its
// outcome.
struct ObservedChange {
  std::string abs;   // absolute, under the root
  std::string comm;  // who changed it, when the producer knows ("" : unknown)
  FileState before;  // the last saved state; kAbsent: the path did not exist
  FileState after;   // the state now; kAbsent: it is gone
  // `before` is a regular file whose content the producer does not hold
  // (watch mode's baseline kept it by name only, or could not read it):
  // the record is flagged kNotCaptured.
  bool before_not_captured = false;
};

// The three kinds of producer the capture core takes:
//  - a call about to run (the tracer): Before, then After, Returned or
//    Abandon; the verdict can hold or refuse the call;
//  - a call reported once it has run, with what its paths held before it
//    (the shim, through the ring: Mutation::pre): Before, then Ran; nothing
//    can be refused, a failure to keep something is recorded as such;
//  - a change already observed (watch mode): Capture::Observed alone.
class MutationSink {
 public:
  virtual ~MutationSink() = default;
  // Before the call of m.tid runs. Invariant: when the verdict lets it run,
  // every record describing it is in the journal (handed to the kernel).
  virtual Verdict Before(const Mutation& m) = 0;
  // The result of the call Before let run with watch_exit (negative errno
  // on failure). A producer that learns every result anyway (the restore,
  // which makes the calls itself: restore/safe_tree.h) may report it for a
  // settle_later call too, in place of Returned.
  virtual void After(pid_t tid, long result) = 0;
  // The call Before let run with settle_later has returned (`tid` stopped
  // again, or exited by itself); its result was not seen.
  virtual void Returned(pid_t tid) = 0;
  // `tid` died inside that call (either kind): its result will never be seen.
  virtual void Abandon(pid_t tid) = 0;
  // The program of `tid` changed (exec) or it exited.
  virtual void ForgetProcess(pid_t tid) = 0;
  // `tid` asked for a mark in the session's timeline (`guard mark`,
  // supervisor/trace/mark_call.h): records it, in order with the calls
  // around it. Returns the mark's number in the session (1 for the first),
  // or a negative errno, which the asking call returns.
  virtual long Mark(pid_t tid, std::string_view label, bool step) {
    (void)tid, (void)label, (void)step;
    return -38;  // ENOSYS: a sink that keeps no timeline
  }
};

}  // namespace guard
