// The Linux-only calls of the code shared by every platform, each behind
// one small function with a twin per platform, chosen at build time
// (CMakeLists.txt): os_calls_linux.cc and os_calls_darwin.cc. They hold no
// logic; the callers' logic is tested on Linux. Where macOS has no
// equivalent, its twin fails the way an older Linux kernel would (ENOSYS,
// EOPNOTSUPP), so that the caller's existing fallback runs.
#pragma once

#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#if defined(__APPLE__)
// Linux's flag values, which guard's own records carry (capture/mutation.h
// holds a rename's flags as Linux numbers them) and its code tests.
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#define RENAME_WHITEOUT (1 << 2)
#endif
// No O_PATH: a directory is opened for reading instead (which needs read
// permission where O_PATH needed none), and O_NOATIME does not exist.
#ifndef O_PATH
#define O_PATH O_RDONLY
#endif
#ifndef O_NOATIME
#define O_NOATIME 0
#endif
// No O_TMPFILE: a combination no macOS open carries (its top bit is unused),
// so that a test for it is never true.
#ifndef O_TMPFILE
#define O_TMPFILE static_cast<int>(0x80000000u | O_DIRECTORY)
#endif
#endif

namespace guard::os {

// renameat2(RENAME_NOREPLACE); macOS: renameatx_np(RENAME_EXCL). 0 or -1
// with errno (EEXIST when `to` exists).
int RenameNoReplace(int from_dir, const char* from, int to_dir, const char* to);

// `size` random bytes from the kernel: getrandom(2), getentropy(3) on
// macOS. Returns the count filled (all of it, or -1 with errno); with
// `nonblock`, fails rather than waits for the pool.
ssize_t Random(void* buf, size_t size, bool nonblock);

// Writes back every dirty page of the filesystem holding `fd`: syncfs(2);
// macOS has none: sync(2), then F_FULLFSYNC of `fd` (docs/macos.md).
int SyncFileSystem(int fd);

// A file's data (and the metadata needed to read it) on stable storage:
// fdatasync(2); macOS: F_FULLFSYNC, which also flushes the drive's cache,
// else fsync.
int SyncData(int fd);

// A close-on-exec pipe: pipe2(O_CLOEXEC); macOS: pipe and then FD_CLOEXEC
// (not atomic: a fork by another thread in between inherits the fds, for
// which guard's children close what they do not know).
int PipeCloexec(int fds[2]);

// execvpe(3); macOS has none: the environment is set, then execvp. Only
// in a child about to exec (after fork).
int ExecVpe(const char* file, char* const argv[], char* const envp[]);

// Closes every fd from `low` up: close_range(2); macOS: a loop up to the
// table's size.
void CloseFrom(int low);

// A read lease taken and released at once (F_SETLEASE), which succeeds
// only while no other process has the file open for writing. macOS has no
// leases: false, as on a filesystem without them.
bool ProbeReadLease(int fd);

// openat2(2) with `resolve` (RESOLVE_* of linux/openat2.h, kResolve*
// below); macOS: -1 with ENOSYS, as a kernel before 5.6 answers.
inline constexpr uint64_t kResolveNoMagiclinks = 0x02;
inline constexpr uint64_t kResolveNoSymlinks = 0x04;
inline constexpr uint64_t kResolveBeneath = 0x08;
long OpenAt2(int dirfd, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve);

// Whether a thread id still exists (tkill(tid, 0)); macOS has no thread ids
// a process can signal: true, "cannot tell".
bool ThreadMayExist(pid_t tid);

// Whether `path` is a mount point of its own, or on another filesystem
// than its parent `parent` (statx's STATX_ATTR_MOUNT_ROOT and device);
// macOS: the devices of stat(2). False when either cannot be read.
bool OwnMount(const char* path, const char* parent);

// The calling thread's id: gettid(2); macOS: pthread_threadid_np, cut to
// pid_t (an id for guard's own records, never signalled).
pid_t ThreadId();

// mkfifoat(3); macOS before 13 has none: the directory's path from
// fcntl(F_GETPATH), then mkfifo (a rename of that directory in between
// would put the fifo where it went).
int MakeFifoAt(int dirfd, const char* name, mode_t mode);

// A signal's name without "SIG" ("KILL"), or nullptr for none:
// sigabbrev_np(3); macOS: sys_signame, in capitals.
const char* SignalAbbrev(int sig);

// An errno value's name ("ENOENT"), or nullptr: strerrorname_np(3);
// macOS has no such call: nullptr (callers print the number).
const char* ErrnoName(int err);

// This program's own path (readlink of /proc/self/exe; macOS:
// _NSGetExecutablePath, made real), or "" when it cannot be told.
std::string SelfExePath();

// When process `pid` started, in the platform's own unit (only equality is
// asked of it), or 0 when it is gone or a zombie: field 22 of
// /proc/PID/stat; macOS: proc_pidinfo.
uint64_t ProcessStartTicks(pid_t pid);

// A copy-on-write clone of open regular file `src_fd` as new file `name`
// in `dir_fd` (mode 0600, never replacing a name): the blocks are shared
// until either file is written, so it costs no data and next to no time.
// Linux: the file made, then ioctl(FICLONE) (btrfs, XFS with reflink,
// bcachefs); macOS: fclonefileat(2) (APFS). 0, or -1 with errno and no
// file left behind: EOPNOTSUPP or EINVAL where the filesystem cannot
// clone (ext4, tmpfs), EXDEV across filesystems.
int CloneFileAt(int src_fd, int dir_fd, const char* name);

}  // namespace guard::os
