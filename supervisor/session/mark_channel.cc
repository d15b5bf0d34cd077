#include "supervisor/session/mark_channel.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/coding.h"
#include "common/file_io.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

// The parent of `pid` from /proc/PID/stat ("pid (comm) state ppid ..."; the
// name may hold spaces and parentheses: the last ')' ends it). -1 if gone.
pid_t ParentOf(pid_t pid) {
  std::string stat;
  if (!ReadFileToString("/proc/" + std::to_string(pid) + "/stat", &stat).ok()) return -1;
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return -1;
  // ") S 1234 ..."
  return static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
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

// The mark from supervisor `pid`, if it listens and is who it says:
// false when nobody (or an impostor) listens there.
bool AskOne(pid_t pid, const std::string& request, long* answer) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = MarkSocketName(pid);
  std::memcpy(addr.sun_path, name.data(), name.size());
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  int rc;
  do rc = connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), len);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return false;
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (getsockopt(s.get(), SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.pid != pid) return false;
  if (!SendAll(s.get(), request.data(), request.size())) {
    *answer = -EPIPE;
    return true;
  }
  char bytes[8];
  size_t got = 0;
  if (!ReadFull(s.get(), bytes, sizeof bytes, &got, "mark answer").ok() || got != sizeof bytes) {
    *answer = -EPIPE;  // the supervisor closed without answering (it ended, or refused the request)
    return true;
  }
  *answer = static_cast<long>(static_cast<int64_t>(DecodeFixed64(bytes)));
  return true;
}

}  // namespace

std::string EncodeMarkRequest(const MarkRequest& request) {
  std::string out(kMarkRequestMagic, sizeof kMarkRequestMagic);
  PutFixed32(&out, kMarkProtocolVersion);
  PutFixed32(&out, request.step ? kMarkRequestStep : 0);
  PutFixed32(&out, static_cast<uint32_t>(request.label.size()));
  out += request.label;
  return out;
}

size_t MarkRequestSize(std::string_view header) {
  if (header.size() < kMarkRequestHeader) return 0;
  if (std::memcmp(header.data(), kMarkRequestMagic, sizeof kMarkRequestMagic) != 0) return 0;
  if (DecodeFixed32(header.data() + 4) != kMarkProtocolVersion) return 0;
  const uint32_t length = DecodeFixed32(header.data() + 12);
  if (length > kMaxMarkLabelBytes) return 0;
  return kMarkRequestHeader + length;
}

Status DecodeMarkRequest(std::string_view bytes, MarkRequest* out) {
  if (bytes.size() < kMarkRequestHeader) return Status::InvalidArgument("mark request: short header");
  if (std::memcmp(bytes.data(), kMarkRequestMagic, sizeof kMarkRequestMagic) != 0) {
    return Status::InvalidArgument("mark request: not a mark request");
  }
  if (DecodeFixed32(bytes.data() + 4) != kMarkProtocolVersion) {
    return Status::InvalidArgument("mark request: protocol version " + std::to_string(DecodeFixed32(bytes.data() + 4)));
  }
  const uint32_t flags = DecodeFixed32(bytes.data() + 8);
  if ((flags & ~kMarkRequestStep) != 0) return Status::InvalidArgument("mark request: unknown flags");
  const uint32_t length = DecodeFixed32(bytes.data() + 12);
  if (length > kMaxMarkLabelBytes) return Status::InvalidArgument("mark request: label too long");
  if (bytes.size() != kMarkRequestHeader + length) return Status::InvalidArgument("mark request: wrong length");
  out->step = (flags & kMarkRequestStep) != 0;
  out->label.assign(bytes.substr(kMarkRequestHeader));
  return Status::Ok();
}

std::string MarkSocketName(pid_t pid) { return std::string(1, '\0') + "guard-mark-" + std::to_string(pid); }

long AskForMark(const MarkRequest& request) {
  const std::string bytes = EncodeMarkRequest(request);
  for (pid_t p = getppid(); p > 1; p = ParentOf(p)) {
    long answer = 0;
    if (AskOne(p, bytes, &answer)) return answer;
  }
  return -ESRCH;
}

bool DescendsFrom(pid_t pid, pid_t ancestor) {
  // A bound on the walk: a chain of parents is short, a loop impossible,
  // but /proc is read while processes come and go.
  for (int depth = 0; depth < 4096 && pid > 1; ++depth) {
    pid = ParentOf(pid);
    if (pid == ancestor) return true;
  }
  return false;
}

}  // namespace guard
