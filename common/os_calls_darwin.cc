// os_calls.h on macOS. Built by tools/macos/build.sh; never run on a Mac
// here (docs/macos.md).
#include "common/os_calls.h"

#include <limits.h>
#include <mach-o/dyld.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/clonefile.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>

#include "common/ring_os.h"

extern char** environ;

namespace guard::os {

int RenameNoReplace(int from_dir, const char* from, int to_dir, const char* to) {
  return ::renameatx_np(from_dir, from, to_dir, to, RENAME_EXCL);
}

ssize_t Random(void* buf, size_t size, bool) {
  // getentropy gives at most 256 bytes a call, and never blocks once the
  // system has booted.
  auto* p = static_cast<unsigned char*>(buf);
  for (size_t done = 0; done < size;) {
    size_t n = std::min<size_t>(size - done, 256);
    if (::getentropy(p + done, n) != 0) return -1;
    done += n;
  }
  return static_cast<ssize_t>(size);
}

int SyncFileSystem(int fd) {
  ::sync();
  return ::fcntl(fd, F_FULLFSYNC) == 0 || errno == ENOTSUP || errno == EINVAL ? 0 : -1;
}

int SyncData(int fd) {
  if (::fcntl(fd, F_FULLFSYNC) == 0) return 0;
  return ::fsync(fd);
}

int PipeCloexec(int fds[2]) {
  if (::pipe(fds) != 0) return -1;
  for (int i = 0; i < 2; ++i) {
    if (::fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0) {
      int e = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      errno = e;
      return -1;
    }
  }
  return 0;
}

int ExecVpe(const char* file, char* const argv[], char* const envp[]) {
  environ = const_cast<char**>(envp);
  return ::execvp(file, argv);
}

void CloseFrom(int low) {
  const int top = ::getdtablesize();
  for (int fd = low; fd < top; ++fd) (void)::close(fd);
}

bool ProbeReadLease(int) { return false; }

long OpenAt2(int, const char*, uint64_t, uint64_t, uint64_t) {
  errno = ENOSYS;
  return -1;
}

bool ThreadMayExist(pid_t) { return true; }

bool OwnMount(const char* path, const char* parent) {
  struct stat self {}, up {};
  if (::stat(path, &self) != 0 || ::stat(parent, &up) != 0) return false;
  return self.st_dev != up.st_dev;
}

pid_t ThreadId() {
  uint64_t id = 0;
  (void)::pthread_threadid_np(nullptr, &id);
  return static_cast<pid_t>(id);
}

int MakeFifoAt(int dirfd, const char* name, mode_t mode) {
  char dir[PATH_MAX];
  if (::fcntl(dirfd, F_GETPATH, dir) != 0) return -1;
  std::string path = std::string(dir) + "/" + name;
  return ::mkfifo(path.c_str(), mode);
}

const char* SignalAbbrev(int sig) {
  static const auto* names = [] {
    auto* upper = new std::array<std::string, NSIG>();
    for (int i = 1; i < NSIG; ++i) {
      for (const char* c = sys_signame[i]; *c != '\0'; ++c) (*upper)[i] += static_cast<char>(::toupper(*c));
    }
    return upper;
  }();
  return sig > 0 && sig < NSIG ? (*names)[sig].c_str() : nullptr;
}

const char* ErrnoName(int) { return nullptr; }

std::string SelfExePath() {
  char buf[PATH_MAX];
  uint32_t size = sizeof buf;
  if (::_NSGetExecutablePath(buf, &size) != 0) return std::string();
  char real[PATH_MAX];
  return ::realpath(buf, real) != nullptr ? std::string(real) : std::string(buf);
}

uint64_t ProcessStartTicks(pid_t pid) { return ring_os_start_ticks(static_cast<int>(pid)); }

int CloneFileAt(int src_fd, int dir_fd, const char* name) {
  // The clone keeps the source's mode; the store's files are 0600.
  if (::fclonefileat(src_fd, dir_fd, name, CLONE_NOFOLLOW | CLONE_NOOWNERCOPY) != 0) return -1;
  (void)::fchmodat(dir_fd, name, 0600, AT_SYMLINK_NOFOLLOW);
  return 0;
}

}  // namespace guard::os
