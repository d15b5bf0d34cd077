#include "supervisor/session/mark_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/coding.h"
#include "supervisor/session/mark_channel.h"

namespace guard {
namespace {

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5
#endif

// A peer that connects and sends nothing holds the next request back this
// long at most.
constexpr int kRequestTimeoutSeconds = 2;

void Answer(int fd, long result) {
  char bytes[8];
  EncodeFixed64(bytes, static_cast<uint64_t>(static_cast<int64_t>(result)));
  (void)!send(fd, bytes, sizeof bytes, MSG_NOSIGNAL);
}

bool RecvAll(int fd, char* data, size_t n) {
  while (n > 0) {
    ssize_t got = recv(fd, data, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;  // closed, or the timeout (EAGAIN)
    data += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

Status MarkListener::Start() {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::FromErrno("mark socket", errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = MarkSocketName(getpid());
  std::memcpy(addr.sun_path, name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  if (bind(s.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    return Status::FromErrno("mark socket guard-mark-" + std::to_string(getpid()), errno);
  }
  if (listen(s.get(), 16) != 0) return Status::FromErrno("mark socket: listen", errno);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  stop_read_.reset(p[0]);
  stop_write_.reset(p[1]);
  listen_ = std::move(s);
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void MarkListener::Stop() {
  if (!thread_.joinable()) return;
  stop_write_.reset();  // EOF on stop_read_
  thread_.join();
  listen_.reset();
  log_->info("mark channel: {} marks, {} requests refused", marks(), refused());
}

void MarkListener::Loop() {
  for (;;) {
    pollfd fds[2] = {{listen_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      log_->error("mark channel: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    UniqueFd c(accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) continue;  // the peer gave up, or no fd to spare: it sees the connection close
    Serve(c.get());
  }
}

bool MarkListener::PeerIsOurs(int fd, pid_t* pid) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return false;
  *pid = cred.pid;
  if (!DescendsFrom(cred.pid, getpid())) return false;
  // The pid was the peer's when it connected; if the peer is still alive
  // now, after the look at its ancestry, no other process can have had
  // that pid meanwhile. Without a pidfd (kernels before 6.5) this is left
  // to chance: the peer would have to die and its pid be reused by a
  // process of this session between its connect and the look.
  int pidfd = -1;
  len = sizeof pidfd;
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

void MarkListener::Serve(int fd) {
  timeval timeout{kRequestTimeoutSeconds, 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  pid_t pid = -1;
  if (!PeerIsOurs(fd, &pid)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    log_->warn("mark channel: refused a request of pid {}: not a process of this session", pid);
    return Answer(fd, -EPERM);
  }
  std::string bytes(kMarkRequestHeader, '\0');
  if (!RecvAll(fd, bytes.data(), bytes.size())) return;
  const size_t size = MarkRequestSize(bytes);
  MarkRequest request;
  Status decoded = Status::InvalidArgument("mark request: not a mark request");
  if (size != 0) {
    bytes.resize(size);
    if (!RecvAll(fd, bytes.data() + kMarkRequestHeader, size - kMarkRequestHeader)) return;
    decoded = DecodeMarkRequest(bytes, &request);
  }
  if (!decoded.ok()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    log_->warn("mark channel: pid {}: {}", pid, decoded.ToString());
    return Answer(fd, -EINVAL);
  }
  // Everything the session changed before this request is recorded first.
  if (hooks_.barrier) {
    if (Status s = hooks_.barrier(); !s.ok()) {
      log_->error("mark channel: mark \"{}\" of pid {} not made: {}", request.label, pid, s.ToString());
      return Answer(fd, -ETIMEDOUT);
    }
  }
  long result = hooks_.mark(pid, request.label, request.step);
  if (result > 0) marks_.fetch_add(1, std::memory_order_relaxed);
  Answer(fd, result);
}

}  // namespace guard
