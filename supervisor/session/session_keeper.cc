#include "supervisor/session/session_keeper.h"

#include "common/os_calls.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace guard {
namespace {

// What guard says to the keeper: a byte, then for kKeep the pid.
constexpr char kKeep = 'k';
constexpr char kRelease = 'r';

bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// The keeper's life (system calls only: see the header).
[[noreturn]] void KeeperMain(int from_guard, const char* alive_path, pid_t guard) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  setsid();
  keeper_platform::CloseAllBut(from_guard);
  // Held locked for the keeper's life: recovery waits for it to end
  // (WaitForKeeper) before it reads the tree.
  int alive = *alive_path == '\0' ? -1 : open(alive_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (alive >= 0) (void)flock(alive, LOCK_EX);
  bool gone = false;
  const int guard_exit = keeper_platform::WatchGuardExit(guard, &gone);
  keeper_platform::Mark mark;
  while (!gone) {
    pollfd fds[2] = {{from_guard, POLLIN, 0}, {guard_exit, POLLIN, 0}};
    if (poll(fds, guard_exit >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (guard_exit >= 0 && fds[1].revents != 0 && fds[0].revents == 0) break;  // guard exited
    char kind = 0;
    ssize_t got = read(from_guard, &kind, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got == 1 && kind == kRelease) _exit(0);
    if (got == 1 && kind == kKeep) {
      int32_t pid = 0;
      if (!ReadAll(from_guard, &pid, sizeof pid)) break;
      (void)keeper_platform::ReadMark(static_cast<pid_t>(pid), &mark);
      continue;
    }
    // The pipe ended (or broke) without guard's word: guard is gone.
    break;
  }
  if (mark.valid) (void)keeper_platform::KillMarked(mark, 1000);
  // Every process of the session is gone: nothing of it changes the tree
  // after this stamp.
  if (alive >= 0) (void)futimens(alive, nullptr);
  _exit(0);
}

}  // namespace

Status SessionKeeper::Start(const std::string& alive_path, std::unique_ptr<SessionKeeper>* out) {
  // Copied before the fork: the keeper allocates nothing (a process with
  // threads forked it).
  char alive[PATH_MAX];
  if (alive_path.size() >= sizeof alive) return Status::InvalidArgument("keeper: heartbeat path too long");
  std::memcpy(alive, alive_path.c_str(), alive_path.size() + 1);
  int p[2];
  if (os::PipeCloexec(p) != 0) return Status::FromErrno("keeper pipe", errno);
  UniqueFd read_end(p[0]), write_end(p[1]);
  const pid_t guard = getpid();
  pid_t pid = keeper_platform::ForkQuiet();
  if (pid < 0) return Status::FromErrno("starting the keeper", errno);
  if (pid == 0) KeeperMain(read_end.get(), alive, guard);
  std::unique_ptr<SessionKeeper> k(new SessionKeeper());
  k->to_keeper_ = std::move(write_end);
  k->pid_ = pid;
  *out = std::move(k);
  return Status::Ok();
}

bool SessionKeeper::Keep(pid_t pid) {
  if (!to_keeper_.valid()) return false;
  char message[1 + sizeof(int32_t)];
  message[0] = kKeep;
  const int32_t p = pid;
  std::memcpy(message + 1, &p, sizeof p);
  if (write(to_keeper_.get(), message, sizeof message) != static_cast<ssize_t>(sizeof message)) return false;
  keeper_platform::Mark mark;
  const bool marked = keeper_platform::ReadMark(pid, &mark);
  if (mark.ns_fd >= 0) close(mark.ns_fd);
  return marked;
}

void SessionKeeper::Release() {
  if (!to_keeper_.valid()) return;
  const char release = kRelease;
  (void)!write(to_keeper_.get(), &release, 1);
  to_keeper_.reset();
  reaped_ = keeper_platform::ReapQuiet(pid_, false);
}

SessionKeeper::~SessionKeeper() {
  Release();
  if (!reaped_) reaped_ = keeper_platform::ReapQuiet(pid_, true);
}

void WaitForKeeper(const std::string& alive_path, int timeout_ms) {
  int fd = open(alive_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) break;
    if (errno != EWOULDBLOCK && errno != EINTR) break;
    timespec pause{0, 10 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  close(fd);
}

}  // namespace guard
