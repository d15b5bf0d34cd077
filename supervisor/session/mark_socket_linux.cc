// mark_socket.h on Linux: an abstract unix socket, SO_PEERCRED, the peer's
// pidfd, /proc/PID/stat.
#include "supervisor/session/mark_socket.h"

#include <poll.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/file_io.h"
#include "supervisor/session/mark_channel.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5
#endif

namespace guard {

std::string MarkSocketName(pid_t pid) { return std::string(1, '\0') + "guard-mark-" + std::to_string(pid); }

namespace mark_socket {
namespace {

socklen_t Address(pid_t pid, sockaddr_un* addr) {
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  const std::string name = MarkSocketName(pid);
  std::memcpy(addr->sun_path, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
}

}  // namespace

Status Listen(pid_t self, UniqueFd* out) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::FromErrno("mark socket", errno);
  sockaddr_un addr;
  const socklen_t len = Address(self, &addr);
  if (bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    return Status::FromErrno("mark socket guard-mark-" + std::to_string(self), errno);
  }
  if (listen(s.get(), 16) != 0) return Status::FromErrno("mark socket: listen", errno);
  *out = std::move(s);
  return Status::Ok();
}

void Unlisten(pid_t) {}  // an abstract name goes with its socket

bool Connect(pid_t pid, UniqueFd* out) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return false;
  sockaddr_un addr;
  const socklen_t len = Address(pid, &addr);
  int rc;
  do rc = connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), len);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return false;
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.pid != pid) return false;
  *out = std::move(s);
  return true;
}

int Accept(int listening) { return accept4(listening, nullptr, nullptr, SOCK_CLOEXEC); }

bool Peer(int fd, pid_t* pid, uint64_t* token) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return false;
  *pid = cred.pid;
  *token = 0;  // the pidfd is asked at the end (PeerIsStill)
  return true;  // another user's process is no descendant of guard's (DescendsFrom) unless guard made it
}

// The pid was the peer's when it connected; if the peer is still alive
// now, after the look at its ancestry, no other process can have had that
// pid meanwhile. Without a pidfd (kernels before 6.5) this is left to
// chance: the peer would have to die and its pid be reused by a process
// of this session between its connect and the look.
bool PeerIsStill(int fd, pid_t, uint64_t) {
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0) return true;
  UniqueFd owned(pidfd);
  // A pidfd polls readable once its process has exited (no permission to
  // signal the peer is needed to ask).
  pollfd p{owned.get(), POLLIN, 0};
  int n;
  do n = poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  return n == 0;
}

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t put = send(fd, data, n, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

// From /proc/PID/stat ("pid (comm) state ppid ..."; the name may hold
// spaces and parentheses: the last ')' ends it).
pid_t ParentOf(pid_t pid) {
  std::string stat;
  if (!ReadFileToString("/proc/" + std::to_string(pid) + "/stat", &stat).ok()) return -1;
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return -1;
  return static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
}

}  // namespace mark_socket
}  // namespace guard
