// os_calls.h on Linux.
#include "common/os_calls.h"

#include <linux/fs.h>
#include <linux/openat2.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/ring_os.h"

namespace guard::os {

int RenameNoReplace(int from_dir, const char* from, int to_dir, const char* to) {
  return ::renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE);
}

ssize_t Random(void* buf, size_t size, bool nonblock) {
  return ::getrandom(buf, size, nonblock ? GRND_NONBLOCK : 0);
}

int SyncFileSystem(int fd) { return ::syncfs(fd); }

int SyncData(int fd) { return ::fdatasync(fd); }

int PipeCloexec(int fds[2]) { return ::pipe2(fds, O_CLOEXEC); }

int ExecVpe(const char* file, char* const argv[], char* const envp[]) { return ::execvpe(file, argv, envp); }

void CloseFrom(int low) { ::syscall(SYS_close_range, static_cast<unsigned>(low), ~0U, 0U); }

bool ProbeReadLease(int fd) {
  if (fcntl(fd, F_SETLEASE, F_RDLCK) != 0) return false;
  fcntl(fd, F_SETLEASE, F_UNLCK);
  return true;
}

long OpenAt2(int dirfd, const char* path, uint64_t flags, uint64_t mode, uint64_t resolve) {
  static_assert(kResolveNoMagiclinks == RESOLVE_NO_MAGICLINKS && kResolveNoSymlinks == RESOLVE_NO_SYMLINKS &&
                kResolveBeneath == RESOLVE_BENEATH);
  struct open_how how = {};
  how.flags = flags;
  how.mode = mode;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

bool ThreadMayExist(pid_t tid) { return !(::syscall(SYS_tkill, static_cast<long>(tid), 0) != 0 && errno == ESRCH); }

bool OwnMount(const char* path, const char* parent) {
  struct statx self {}, up {};
  if (::statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &self) != 0 ||
      ::statx(AT_FDCWD, parent, 0, STATX_BASIC_STATS, &up) != 0) {
    return false;
  }
  if ((self.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (self.stx_attributes & STATX_ATTR_MOUNT_ROOT)) return true;
  return self.stx_dev_major != up.stx_dev_major || self.stx_dev_minor != up.stx_dev_minor;
}

pid_t ThreadId() { return ::gettid(); }

int MakeFifoAt(int dirfd, const char* name, mode_t mode) { return ::mkfifoat(dirfd, name, mode); }

const char* SignalAbbrev(int sig) { return ::sigabbrev_np(sig); }

const char* ErrnoName(int err) { return ::strerrorname_np(err); }

std::string SelfExePath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

uint64_t ProcessStartTicks(pid_t pid) { return ring_os_start_ticks(static_cast<int>(pid)); }

int CloneFileAt(int src_fd, int dir_fd, const char* name) {
  int fd;
  do {
    fd = ::openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return -1;
  int rc;
  do {
    rc = ::ioctl(fd, FICLONE, src_fd);
  } while (rc != 0 && errno == EINTR);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return 0;
  ::unlinkat(dir_fd, name, 0);
  errno = err;
  return -1;
}

}  // namespace guard::os
