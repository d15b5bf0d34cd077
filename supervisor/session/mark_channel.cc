#include "supervisor/session/mark_channel.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/coding.h"
#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/session/mark_socket.h"

namespace guard {
namespace {

// The mark from supervisor `pid`, if it listens and is who it says:
// false when nobody (or an impostor) listens there.
bool AskOne(pid_t pid, const std::string& request, long* answer) {
  UniqueFd s;
  if (!mark_socket::Connect(pid, &s)) return false;
  if (!mark_socket::SendAll(s.get(), request.data(), request.size())) {
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

long AskForMark(const MarkRequest& request) {
  const std::string bytes = EncodeMarkRequest(request);
  for (pid_t p = getppid(); p > 1; p = mark_socket::ParentOf(p)) {
    long answer = 0;
    if (AskOne(p, bytes, &answer)) return answer;
  }
  return -ESRCH;
}

bool DescendsFrom(pid_t pid, pid_t ancestor) { return DescendsFrom(pid, ancestor, mark_socket::ParentOf); }

bool DescendsFrom(pid_t pid, pid_t ancestor, const std::function<pid_t(pid_t)>& parent_of) {
  // A bound on the walk: a chain of parents is short, a loop impossible in
  // the kernel's table, but the table is read while processes come and go.
  for (int depth = 0; depth < 4096 && pid > 1; ++depth) {
    pid = parent_of(pid);
    if (pid == ancestor) return true;
  }
  return false;
}

}  // namespace guard
