// mark_socket.h on macOS, compiled by the macOS build only and never run
// here (docs/macos.md): a socket file in guard's state directory,
// LOCAL_PEERPID and getpeereid for the peer, its start time
// (proc_pidinfo) for its being the same process, proc_pidinfo for parents.
//
// The state directory is not hidden from the command on macOS (no mount
// namespace: docs/security.md), so a process of the session can remove
// the file or bind one of its own there first: marks then fail (guard mark
// says no session answers), but no mark is forged, since `guard mark`
// believes only a socket whose listener is the ancestor it asked.
#include "supervisor/session/mark_socket.h"

#include <fcntl.h>
#include <libproc.h>
#include <stddef.h>
#include <sys/proc_info.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/os_calls.h"
#include "common/state_dir.h"

#ifndef SOL_LOCAL
#define SOL_LOCAL 0
#endif
#ifndef LOCAL_PEERPID
#define LOCAL_PEERPID 0x002
#endif

namespace guard::mark_socket {
namespace {

// "<state directory>/marks", made 0700 if missing; "" without a state directory.
std::string MarksDir(bool make) {
  StateDir state;
  if (!StateDir::Open(&state).ok()) return "";
  const std::string dir = state.path() + "/marks";
  if (make && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  return dir;
}

Status Address(const std::string& dir, pid_t pid, sockaddr_un* addr, socklen_t* len) {
  const std::string path = dir + "/" + std::to_string(pid);
  *addr = sockaddr_un{};
  addr->sun_family = AF_UNIX;
  if (dir.empty()) return Status::NotFound("no state directory for the mark socket");
  if (path.size() >= sizeof addr->sun_path) return Status::FromErrno("mark socket " + path, ENAMETOOLONG);
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return Status::Ok();
}

// Close-on-exec, and no SIGPIPE for a peer that went away (macOS has no
// MSG_NOSIGNAL: the socket carries it).
void Ready(int fd) {
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
}

}  // namespace

Status Listen(pid_t self, UniqueFd* out) {
  sockaddr_un addr;
  socklen_t len = 0;
  GUARD_RETURN_IF_ERROR(Address(MarksDir(true), self, &addr, &len));
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM, 0));
  if (!s.valid()) return Status::FromErrno("mark socket", errno);
  Ready(s.get());
  // A file of this name is a dead guard's that had this pid: this
  // process has it now.
  (void)unlink(addr.sun_path);
  if (bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    return Status::FromErrno(std::string("mark socket ") + addr.sun_path, errno);
  }
  // In a 0700 directory already; 0600 as every file of guard's own.
  if (chmod(addr.sun_path, 0600) != 0 || listen(s.get(), 16) != 0) {
    const int err = errno;
    (void)unlink(addr.sun_path);
    return Status::FromErrno(std::string("mark socket ") + addr.sun_path, err);
  }
  *out = std::move(s);
  return Status::Ok();
}

void Unlisten(pid_t self) {
  sockaddr_un addr;
  socklen_t len = 0;
  if (Address(MarksDir(false), self, &addr, &len).ok()) (void)unlink(addr.sun_path);
}

bool Connect(pid_t pid, UniqueFd* out) {
  sockaddr_un addr;
  socklen_t len = 0;
  if (!Address(MarksDir(false), pid, &addr, &len).ok()) return false;
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM, 0));
  if (!s.valid()) return false;
  Ready(s.get());
  int rc;
  do rc = connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), len);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return false;
  pid_t listener = -1;
  socklen_t pid_len = sizeof listener;
  if (getsockopt(s.get(), SOL_LOCAL, LOCAL_PEERPID, &listener, &pid_len) != 0 || listener != pid) return false;
  *out = std::move(s);
  return true;
}

int Accept(int listening) {
  int fd;
  do fd = accept(listening, nullptr, nullptr);
  while (fd < 0 && errno == EINTR);
  if (fd >= 0) Ready(fd);
  return fd;
}

bool Peer(int fd, pid_t* pid, uint64_t* token) {
  socklen_t len = sizeof *pid;
  if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, pid, &len) != 0 || *pid <= 0) return false;
  uid_t uid = 0;
  gid_t gid = 0;
  if (getpeereid(fd, &uid, &gid) != 0 || uid != getuid()) return false;
  *token = os::ProcessStartTicks(*pid);
  return *token != 0;
}

// A process's start time (microseconds) tells it from a later process
// with the same pid.
bool PeerIsStill(int, pid_t pid, uint64_t token) { return token != 0 && os::ProcessStartTicks(pid) == token; }

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t put = send(fd, data, n, 0);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    data += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

pid_t ParentOf(pid_t pid) {
  proc_bsdinfo info{};
  if (proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, sizeof info) != static_cast<int>(sizeof info)) return -1;
  return static_cast<pid_t>(info.pbi_ppid);
}

}  // namespace guard::mark_socket
