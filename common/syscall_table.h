/* The system calls guard traps or refuses, each declared once: the seccomp
 * filter (supervisor/trace/seccomp_filter.cc), the tracer's decoder
 * (supervisor/trace/syscall_decoder.cc), the shim's syscall()
 * (interpose/linux/syscall_call.c) and their unit tests are built from
 * these rows. A call added here is filtered, decoded and tested by
 * construction.
 *
 * C, not C++: the shim is built as C. No allocation: the rows are constant
 * data, found by number with a switch.
 *
 * A row is X(name, x86_64, aarch64, filter, action, args, fixed_flags, shim):
 *  - name: the kernel's name of the call (libseccomp's, the records').
 *  - x86_64, aarch64: its number on each architecture, GUARD_NO_SYSCALL
 *    where the architecture has no such call (aarch64 has only the *at
 *    forms). A number is the same on every architecture from 424 on.
 *  - filter: what the filter does with it (enum guard_syscall_filter).
 *  - action: the MutationRequest::Action it decodes to (supervisor/capture/
 *    mutation.h, without the k), None for a call that changes no file. A
 *    call the filter stops that changes no file changes the view paths are
 *    resolved in (supervisor/trace/tracee_views.h, IsViewChange).
 *  - args: the role of each argument, one character for each, in order:
 *      d  the directory fd of the first path     p  the first path
 *      D  the directory fd of the second path    P  the second path
 *      t  a symlink's target text                f  the fd the call acts on
 *      o  flags (open, *at, rename)              m  a mode
 *      x  an xattr name; v its value             h  a struct open_how
 *      a  a struct xattr_args                    s  a struct sockaddr
 *      z  the size of the h, v, a or s before it .  of no concern here
 *      i  kill's target: a process, a group (0, -N) or every process (-1)
 *      I  a process (a thread group's id; 0: the caller, for prlimit64)
 *      j  a thread                               k  a signal's number
 *      n  a new value, by pointer (NULL: none)
 *    A path is relative to its directory fd, AT_FDCWD when the call has none.
 *  - fixed_flags: flags the call implies, OR'ed into its o flags (creat's
 *    open flags; lchown's and lsetxattr's AT_SYMLINK_NOFOLLOW).
 *  - shim: 1 if the shim's syscall() classifies the number like its wrapper
 *    and makes it from its stub; 0 sends it to libc's syscall(), where the
 *    filter stops what it must. */
#ifndef GUARD_COMMON_SYSCALL_TABLE_H_
#define GUARD_COMMON_SYSCALL_TABLE_H_

#include <fcntl.h>

#define GUARD_NO_SYSCALL (-1)

/* What the filter does with a call. */
enum guard_syscall_filter {
  GUARD_SYSCALL_TRAP,           /* stops in the tracer (SECCOMP_RET_TRACE) */
  GUARD_SYSCALL_TRAP_WRITE,     /* stops when its o flags ask for writing, creating or truncating */
  GUARD_SYSCALL_EPERM_WRITE,    /* fails with EPERM when its o flags ask for that */
  GUARD_SYSCALL_EPERM_LISTENER, /* fails with EPERM when it would install a seccomp listener */
  GUARD_SYSCALL_EPERM,          /* fails with EPERM */
  GUARD_SYSCALL_ENOSYS,         /* fails with ENOSYS, as on a kernel without it */
  /* The next two stop wherever the call is made, the shim's stub included:
   * the tracer decides by the target whether the call may run (docs/security.md,
   * "guard out of the session's reach"). */
  GUARD_SYSCALL_TRAP_UNCATCHABLE, /* stops when its k signal is SIGKILL or SIGSTOP */
  GUARD_SYSCALL_TRAP_OTHER,       /* stops when its I process is not 0 and its n value is given */
  GUARD_SYSCALL_EPERM_SETSIG,     /* fails with EPERM when it makes SIGKILL or SIGSTOP an fd's I/O signal */
};

/* The open flags that make an open a mutation. O_TMPFILE contains
 * O_DIRECTORY but always comes with O_WRONLY or O_RDWR. */
#define GUARD_OPEN_WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

#define GUARD_SYSCALLS(X)                                                                                      \
  /* name              x86_64            aarch64           filter       action     args      fixed    shim */  \
  /* Opens: only those that may write change a file. */                                                    \
  X(open,              2,                GUARD_NO_SYSCALL, TRAP_WRITE,  Open,      "pom",    0,                  1) \
  X(openat,            257,              56,               TRAP_WRITE,  Open,      "dpom",   0,                  1) \
  X(creat,             85,               GUARD_NO_SYSCALL, TRAP,        Open,      "pm",     O_CREAT | O_WRONLY | O_TRUNC, 1) \
  /* Its flags are in memory, out of the filter's reach: the decoder lets a read-only one run. */          \
  X(openat2,           437,              437,              TRAP,        Open,      "dphz",   0,                  0) \
  /* It names no path whose pre-image could be saved: opening a handle for writing fails closed. */        \
  X(open_by_handle_at, 304,              265,              EPERM_WRITE, None,      "..o",    0,                  0) \
  X(truncate,          76,               45,               TRAP,        Truncate,  "p",      0,                  1) \
  X(ftruncate,         77,               46,               TRAP,        Ftruncate, "f",      0,                  1) \
  X(rename,            82,               GUARD_NO_SYSCALL, TRAP,        Rename,    "pP",     0,                  1) \
  X(renameat,          264,              38,               TRAP,        Rename,    "dpDP",   0,                  1) \
  X(renameat2,         316,              276,              TRAP,        Rename,    "dpDPo",  0,                  1) \
  X(unlink,            87,               GUARD_NO_SYSCALL, TRAP,        Unlink,    "p",      0,                  1) \
  /* With AT_REMOVEDIR it is an rmdir. */                                                                   \
  X(unlinkat,          263,              35,               TRAP,        Unlink,    "dpo",    0,                  1) \
  X(rmdir,             84,               GUARD_NO_SYSCALL, TRAP,        Rmdir,     "p",      0,                  1) \
  X(mkdir,             83,               GUARD_NO_SYSCALL, TRAP,        Mkdir,     "pm",     0,                  1) \
  X(mkdirat,           258,              34,               TRAP,        Mkdir,     "dpm",    0,                  1) \
  X(symlink,           88,               GUARD_NO_SYSCALL, TRAP,        Symlink,   "tp",     0,                  1) \
  X(symlinkat,         266,              36,               TRAP,        Symlink,   "tdp",    0,                  1) \
  X(link,              86,               GUARD_NO_SYSCALL, TRAP,        Link,      "pP",     0,                  1) \
  X(linkat,            265,              37,               TRAP,        Link,      "dpDPo",  0,                  1) \
  X(chmod,             90,               GUARD_NO_SYSCALL, TRAP,        Chmod,     "pm",     0,                  1) \
  X(fchmod,            91,               52,               TRAP,        Fchmod,    "fm",     0,                  1) \
  /* fchmodat has no flags argument; fchmodat2 (Linux 6.6) has. */                                          \
  X(fchmodat,          268,              53,               TRAP,        Chmod,     "dpm",    0,                  1) \
  X(fchmodat2,         452,              452,              TRAP,        Chmod,     "dpmo",   0,                  0) \
  X(mknod,             133,              GUARD_NO_SYSCALL, TRAP,        Mknod,     "pm",     0,                  1) \
  X(mknodat,           259,              33,               TRAP,        Mknod,     "dpm",    0,                  1) \
  /* They change permission bits as a side effect: chown clears set-uid and set-gid, an ACL written as  \
   * an xattr sets the mode. The tracer lets the other xattr names and files without set-id bits go. */   \
  X(chown,             92,               GUARD_NO_SYSCALL, TRAP,        Chown,     "p",      0,                  1) \
  X(lchown,            94,               GUARD_NO_SYSCALL, TRAP,        Chown,     "p",      AT_SYMLINK_NOFOLLOW, 1) \
  X(fchown,            93,               55,               TRAP,        Fchown,    "f",      0,                  1) \
  X(fchownat,          260,              54,               TRAP,        Chown,     "dp..o",  0,                  1) \
  X(setxattr,          188,              5,                TRAP,        SetAcl,    "pxvz",   0,                  1) \
  X(lsetxattr,         189,              6,                TRAP,        SetAcl,    "pxvz",   AT_SYMLINK_NOFOLLOW, 1) \
  X(fsetxattr,         190,              7,                TRAP,        FsetAcl,   "fxvz",   0,                  1) \
  /* Linux 6.13. */                                                                                         \
  X(setxattrat,        463,              463,              TRAP,        SetAcl,    "dpoxaz", 0,                  0) \
  /* A unix socket bound to a path makes a file (the decoder lets the other families through). */          \
  X(bind,              49,               200,              TRAP,        Mknod,     ".sz",    0,                  0) \
  /* They change no file, but the view paths are resolved in (the root, the mount namespace), which the  \
   * tracer keeps from call to call only because it sees every change (supervisor/trace/tracee_views.h). */ \
  X(chroot,            161,              51,               TRAP,        None,      "p",      0,                  0) \
  X(pivot_root,        155,              41,               TRAP,        None,      "pP",     0,                  0) \
  X(unshare,           272,              97,               TRAP,        None,      "",       0,                  0) \
  X(setns,             308,              268,              TRAP,        None,      "f",      0,                  0) \
  X(mount,             165,              40,               TRAP,        None,      ".p",     0,                  0) \
  X(umount2,           166,              39,               TRAP,        None,      "p",      0,                  0) \
  X(move_mount,        429,              429,              TRAP,        None,      "dpDP",   0,                  0) \
  X(open_tree,         428,              428,              TRAP,        None,      "dp",     0,                  0) \
  X(fsmount,           432,              432,              TRAP,        None,      "f",      0,                  0) \
  X(mount_setattr,     442,              442,              TRAP,        None,      "dp",     0,                  0) \
  /* io_uring carries file operations past seccomp. Refusing io_uring_setup makes libuv fall back to     \
   * syscalls; refusing io_uring_enter and io_uring_register makes a ring from outside useless. */          \
  X(io_uring_setup,    425,              425,              ENOSYS,      None,      "",       0,                  0) \
  X(io_uring_enter,    426,              426,              ENOSYS,      None,      "f",      0,                  0) \
  X(io_uring_register, 427,              427,              ENOSYS,      None,      "f",      0,                  0) \
  /* An fd taken from another process was opened where guard saw nothing. */                                \
  X(pidfd_getfd,       438,              438,              EPERM,       None,      "",       0,                  0) \
  /* Tracing guard or a sibling, or writing into another process's memory, could detach the net or       \
   * rewrite guard's state in memory (docs/security.md). */                                                 \
  X(ptrace,            101,              117,              EPERM,       None,      "",       0,                  0) \
  X(process_vm_writev, 311,              271,              EPERM,       None,      "",       0,                  0) \
  /* A listener's filter outranks the tracer and can let calls run unseen. */                               \
  X(seccomp,           317,              277,              EPERM_LISTENER, None,   "",       0,                  0) \
  /* The signals guard cannot catch or ignore, and a lower limit that could kill it (RLIMIT_CPU) or     \
   * stop its writes (RLIMIT_FSIZE, RLIMIT_NOFILE): the tracer refuses them when they reach guard.      \
   * Every other signal guard takes harmlessly (supervisor/trace/signal_relay.h). */                      \
  X(kill,              62,               129,              TRAP_UNCATCHABLE, None, "ik",     0,                  0) \
  X(tkill,             200,              130,              TRAP_UNCATCHABLE, None, "jk",     0,                  0) \
  X(tgkill,            234,              131,              TRAP_UNCATCHABLE, None, "Ijk",    0,                  0) \
  X(rt_sigqueueinfo,   129,              138,              TRAP_UNCATCHABLE, None, "Ik.",    0,                  0) \
  X(rt_tgsigqueueinfo, 297,              240,              TRAP_UNCATCHABLE, None, "Ijk.",   0,                  0) \
  X(pidfd_send_signal, 424,              424,              TRAP_UNCATCHABLE, None, "fk.o",   0,                  0) \
  X(prlimit64,         302,              261,              TRAP_OTHER,  None,      "I.n.",   0,                  0) \
  /* F_SETSIG: the signal an fd's owner (F_SETOWN: any process of the user) gets when I/O is possible. */ \
  X(fcntl,             72,               25,               EPERM_SETSIG, None,     "f.k",    0,                  0)

/* The actions of the rows, in MutationRequest::Action's words. */
#define GUARD_SYSCALL_ACTIONS(A)                                                                                  \
  A(Open) A(Truncate) A(Ftruncate) A(Rename) A(Unlink) A(Rmdir) A(Mkdir) A(Symlink) A(Link) A(Chmod) A(Fchmod) \
  A(Mknod) A(Chown) A(Fchown) A(SetAcl) A(FsetAcl)

#define GUARD_SYSCALL_ACTION_ENUM_(x) GUARD_ACTION_##x,
enum guard_syscall_action { GUARD_ACTION_None, GUARD_SYSCALL_ACTIONS(GUARD_SYSCALL_ACTION_ENUM_) };
#undef GUARD_SYSCALL_ACTION_ENUM_

/* Each row's position in guard_syscalls. */
#define GUARD_SYSCALL_INDEX_(name, x86_64, aarch64, filter, action, args, fixed, shim) GUARD_SYSCALL_ROW_##name,
enum { GUARD_SYSCALLS(GUARD_SYSCALL_INDEX_) GUARD_SYSCALL_ROWS };
#undef GUARD_SYSCALL_INDEX_

/* The number of a row on the architecture being built. A call the
 * architecture lacks gets a negative number of its own (-1 - its row), so
 * that no two rows share one and no real call has one. */
#if defined(__x86_64__)
#define GUARD_SYSCALL_NR_(name, x86_64, aarch64) ((x86_64) >= 0 ? (x86_64) : -1 - GUARD_SYSCALL_ROW_##name)
#elif defined(__aarch64__)
#define GUARD_SYSCALL_NR_(name, x86_64, aarch64) ((aarch64) >= 0 ? (aarch64) : -1 - GUARD_SYSCALL_ROW_##name)
#else
#error "guard's syscall table knows x86_64 and aarch64"
#endif

struct guard_syscall {
  const char* name;
  long nr; /* this architecture's; negative: it has no such call */
  unsigned char filter; /* enum guard_syscall_filter */
  unsigned char action; /* enum guard_syscall_action */
  unsigned char shim;
  const char* args;
  unsigned long fixed_flags;
};

#define GUARD_SYSCALL_ROW_(name, x86_64, aarch64, filter, action, args, fixed, shim) \
  {#name, GUARD_SYSCALL_NR_(name, x86_64, aarch64), GUARD_SYSCALL_##filter, GUARD_ACTION_##action, shim, args, fixed},
static const struct guard_syscall guard_syscalls[GUARD_SYSCALL_ROWS] = {GUARD_SYSCALLS(GUARD_SYSCALL_ROW_)};
#undef GUARD_SYSCALL_ROW_

/* The row of syscall `nr` on this architecture, or NULL: one switch. */
static inline const struct guard_syscall* guard_syscall_find(long nr) {
  if (nr < 0) return 0;
#define GUARD_SYSCALL_CASE_(name, x86_64, aarch64, filter, action, args, fixed, shim) \
  case GUARD_SYSCALL_NR_(name, x86_64, aarch64):                                     \
    return &guard_syscalls[GUARD_SYSCALL_ROW_##name];
  switch (nr) {
    GUARD_SYSCALLS(GUARD_SYSCALL_CASE_)
    default:
      return 0;
  }
#undef GUARD_SYSCALL_CASE_
}

/* The argument that has `role` (a character of the args column), or -1. */
static inline int guard_syscall_arg(const struct guard_syscall* s, char role) {
  for (int i = 0; s->args[i] != '\0'; ++i) {
    if (s->args[i] == role) return i;
  }
  return -1;
}

#endif /* GUARD_COMMON_SYSCALL_TABLE_H_ */
