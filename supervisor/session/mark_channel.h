// The mark channel: how `guard mark`, run by a process of a session, asks
// that session's supervisor for a mark when no tracer stops its call
// (--mode preload; watch mode). The tracer's way stays for trace and auto
// (supervisor/trace/mark_call.h); this one needs nothing but a socket.
//
// The supervisor listens on a unix socket named after itself (Linux: the
// abstract name "guard-mark-<pid>", no file anywhere, reachable from the
// session's user and mount namespaces, whose state directory is
// read-only). `guard mark` walks its own ancestors, nearest first, and asks
// the first one that listens: the supervisor of the session it runs in,
// whatever its environment says (it may have been emptied).
//
// Both ends check the other:
//   - the supervisor answers only a process it is an ancestor of
//     (SO_PEERCRED, and the peer's pidfd where the kernel gives one, so
//     that a reused pid cannot pass): a process of another session or of
//     another user gets EPERM and no mark is made;
//   - `guard mark` believes only the socket whose owner (SO_PEERCRED) is
//     the ancestor it asked: a process that took the name first cannot
//     answer in guard's place.
//
// One request, one answer, on one connection:
//   request:  "GMK1", u32 version (1), u32 flags (bit 0: a step),
//             u32 label length (at most kMaxMarkLabelBytes), the label
//   answer:   i64: the mark's number (>= 1), or a negative errno
// little-endian (common/coding.h). The answer comes only once the
// supervisor's barrier has returned: every change the session made before
// the request is in the journal before the mark's record, so `guard undo
// --to MARK` is exact (docs/capture.md, "Marks without the tracer").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace guard {

inline constexpr char kMarkRequestMagic[4] = {'G', 'M', 'K', '1'};
inline constexpr uint32_t kMarkProtocolVersion = 1;
inline constexpr uint32_t kMarkRequestStep = 1;
inline constexpr size_t kMarkRequestHeader = 16;
inline constexpr size_t kMaxMarkLabelBytes = 512;  // as the tracer's (mark_call.h)

struct MarkRequest {
  std::string label;
  bool step = false;
};

// The request's bytes.
std::string EncodeMarkRequest(const MarkRequest& request);
// `bytes` read whole (header and label, nothing after): kInvalidArgument
// for a wrong magic, version, flag, length or trailing byte.
Status DecodeMarkRequest(std::string_view bytes, MarkRequest* out);
// How many bytes the request whose header is `header` (kMarkRequestHeader
// bytes) has in all; 0 when the header is not a request's.
size_t MarkRequestSize(std::string_view header);

// The socket address of supervisor `pid`: the bytes of sun_path, starting
// with a NUL (an abstract name).
std::string MarkSocketName(pid_t pid);

// The client: asks the nearest ancestor that listens. Returns the mark's
// number (>= 1) or -errno: -ESRCH when no ancestor listens (not inside a
// session without the tracer), -EPERM when the supervisor refused.
long AskForMark(const MarkRequest& request);

// Whether `pid` descends from `ancestor` (its parent, its parent's parent,
// ...), read from /proc/PID/stat.
bool DescendsFrom(pid_t pid, pid_t ancestor);

}  // namespace guard
