// The keeper's Linux part (session_keeper.h): the session's processes are
// those in the command's user namespace or in one nested in it.
#include <dirent.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/session/session_keeper.h"

namespace guard::keeper_platform {
namespace {

// "/proc/<pid>/ns/user" into `out` (64 bytes), system calls only.
void NsPath(char* out, const char* pid_digits) {
  const char head[] = "/proc/";
  const char tail[] = "/ns/user";
  size_t at = 0;
  std::memcpy(out, head, sizeof head - 1);
  at = sizeof head - 1;
  size_t n = std::strlen(pid_digits);
  std::memcpy(out + at, pid_digits, n);
  at += n;
  std::memcpy(out + at, tail, sizeof tail);
}

// Whether process `pid_digits` has ended and waits to be reaped (state Z
// or X in /proc/<pid>/stat): its user namespace still shows (a zombie keeps
// its credentials), but it changes nothing, and its parent (often init,
// once guard is gone) reaps it when it will. System calls only.
bool Ended(const char* pid_digits) {
  char path[64];
  const char head[] = "/proc/";
  const char tail[] = "/stat";
  size_t n = std::strlen(pid_digits);
  std::memcpy(path, head, sizeof head - 1);
  std::memcpy(path + sizeof head - 1, pid_digits, n);
  std::memcpy(path + sizeof head - 1 + n, tail, sizeof tail);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;  // gone
  char buf[512];
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return true;
  // "pid (comm) S ...": the state follows the last ')' (comm may hold one).
  for (ssize_t i = got - 1; i >= 0; --i) {
    if (buf[i] == ')') return i + 2 < got && (buf[i + 2] == 'Z' || buf[i + 2] == 'X');
  }
  return false;
}

// Whether the user namespace at `path` is the mark's or nested in it.
bool InMarkedNamespace(const Mark& mark, const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) return false;  // gone
  if (st.st_dev == mark.ns_dev && st.st_ino == mark.ns_ino) return true;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  // A namespace's parents, up to the keeper's own (EPERM above it).
  for (int depth = 0; fd >= 0 && depth < 32; ++depth) {
    int parent = ioctl(fd, NS_GET_PARENT);
    close(fd);
    fd = parent;
    if (fd < 0 || fstat(fd, &st) != 0) break;
    if (st.st_dev == mark.ns_dev && st.st_ino == mark.ns_ino) {
      close(fd);
      return true;
    }
  }
  if (fd >= 0) close(fd);
  return false;
}

}  // namespace

bool ReadMark(pid_t pid, Mark* mark) {
  mark->valid = true;
  mark->first = pid;
  char digits[16];
  size_t n = 0;
  char rev[16];
  long v = pid;
  do rev[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; ++i) digits[i] = rev[n - 1 - i];
  digits[n] = '\0';
  char path[64];
  NsPath(path, digits);
  struct stat theirs, ours;
  if (stat(path, &theirs) != 0 || stat("/proc/self/ns/user", &ours) != 0) return false;
  // In guard's own namespace: the mark would name every process of the user.
  if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino) return false;
  // Held open, so that the namespace (and so its inode number) lives as
  // long as the keeper does.
  mark->ns_fd = open(path, O_RDONLY | O_CLOEXEC);
  if (mark->ns_fd < 0) return false;
  mark->ns_dev = theirs.st_dev;
  mark->ns_ino = theirs.st_ino;
  return true;
}

int KillMarked(const Mark& mark, int passes) {
  int kills = 0;
  if (mark.first > 0) {
    kill(mark.first, SIGKILL);
    ++kills;
  }
  if (mark.ns_fd < 0) return kills;
  const pid_t self = getpid();
  for (int pass = 0; pass < passes; ++pass) {
    int found = 0;
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return kills;
    alignas(8) char buf[8192];
    for (;;) {
      long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
      if (got <= 0) break;
      for (long at = 0; at < got;) {
        auto* e = reinterpret_cast<struct dirent64*>(buf + at);
        at += e->d_reclen;
        const char* name = e->d_name;
        if (name[0] < '1' || name[0] > '9') continue;
        pid_t pid = 0;
        for (const char* c = name; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
        if (pid == self) continue;
        char path[64];
        NsPath(path, name);
        if (InMarkedNamespace(mark, path) && !Ended(name) && kill(pid, SIGKILL) == 0) {
          ++found;
          ++kills;
        }
      }
    }
    close(dir);
    if (found == 0) break;
    // The killed processes are on their way out; what one forked before
    // its end is found by the next pass.
    timespec pause{0, 2 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  return kills;
}

void CloseAllBut(int keep) {
  if (keep > 0) syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
}

pid_t ForkQuiet() {
  // No exit signal: a "clone" child, which waitpid without __WALL or
  // __WCLONE does not wait for.
  return static_cast<pid_t>(syscall(SYS_clone, 0UL, nullptr, nullptr, nullptr, nullptr));
}

bool ReapQuiet(pid_t pid, bool wait) {
  int status = 0;
  pid_t got;
  do got = waitpid(pid, &status, __WCLONE | (wait ? 0 : WNOHANG));
  while (got < 0 && errno == EINTR);
  return got == pid || (got < 0 && errno == ECHILD);
}

// The pipe tells guard's end: only guard holds its write end (close-on-exec,
// and the command's process waits for its exec with the pipe closed).
int WatchGuardExit(pid_t, bool* gone) {
  *gone = false;
  return -1;
}

}  // namespace guard::keeper_platform
