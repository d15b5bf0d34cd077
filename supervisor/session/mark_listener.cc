#include "supervisor/session/mark_listener.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "common/coding.h"
#include "common/os_calls.h"
#include "supervisor/session/mark_channel.h"
#include "supervisor/session/mark_socket.h"

namespace guard {
namespace {

// A peer that connects and sends nothing holds the next request back this
// long at most.
constexpr int kRequestTimeoutSeconds = 2;

void Answer(int fd, long result) {
  char bytes[8];
  EncodeFixed64(bytes, static_cast<uint64_t>(static_cast<int64_t>(result)));
  (void)mark_socket::SendAll(fd, bytes, sizeof bytes);
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
  UniqueFd s;
  GUARD_RETURN_IF_ERROR(mark_socket::Listen(getpid(), &s));
  int p[2];
  if (os::PipeCloexec(p) != 0) {
    mark_socket::Unlisten(getpid());
    return Status::FromErrno("pipe", errno);
  }
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
  mark_socket::Unlisten(getpid());
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
    UniqueFd c(mark_socket::Accept(listen_.get()));
    if (!c.valid()) continue;  // the peer gave up, or no fd to spare: it sees the connection close
    Serve(c.get());
  }
}

bool MarkListener::PeerIsOurs(int fd, pid_t* pid) {
  uint64_t token = 0;
  if (!mark_socket::Peer(fd, pid, &token)) return false;
  // The same process before and after the look at its ancestry: a peer
  // that died and whose pid a process of this session took meanwhile does
  // not pass (mark_socket.h).
  return DescendsFrom(*pid, getpid()) && mark_socket::PeerIsStill(fd, *pid, token);
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
