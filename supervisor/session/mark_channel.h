// The mark channel: how `guard mark`, run by a process of a session, asks
// that session's supervisor for a mark when no tracer stops its call
// (--mode preload; watch mode, on Linux and macOS). The tracer's way stays
// for trace and auto (supervisor/trace/mark_call.h); this one needs nothing
// but a socket.
//
// The supervisor listens on a unix socket named after itself (the
// transport is the platform's: mark_socket.h; Linux: the abstract name
// "guard-mark-<pid>", reachable from the session's user and mount
// namespaces, whose state directory is read-only; macOS: a socket file in
// guard's state directory). `guard mark` walks its own ancestors, nearest
// first, and asks the first one that listens: the supervisor of the session
// it runs in, whatever its environment says (it may have been emptied).
//
// Both ends check the other:
//   - the supervisor answers only a process it is an ancestor of (its pid
//     from the socket, the same process before and after the look at its
//     ancestry: mark_socket.h): a process of another session or of another
//     user gets EPERM and no mark is made;
//   - `guard mark` believes only the socket whose owner is the ancestor it
//     asked: a process that took the name first cannot answer in guard's
//     place.
//
// One request, one answer, on one connection (the same on every platform):
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
#include <functional>
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

// Linux: the socket address of supervisor `pid`, the bytes of sun_path,
// starting with a NUL (an abstract name).
std::string MarkSocketName(pid_t pid);

// The client: asks the nearest ancestor that listens. Returns the mark's
// number (>= 1) or -errno: -ESRCH when no ancestor listens (not inside a
// session without the tracer), -EPERM when the supervisor refused.
long AskForMark(const MarkRequest& request);

// Whether `pid` descends from `ancestor` (its parent, its parent's parent,
// ...), read from the system (mark_socket::ParentOf).
bool DescendsFrom(pid_t pid, pid_t ancestor);
// The same over any process table: `parent_of` gives a pid's parent, or
// -1 for a process that is gone. The walk is bounded (a table read while
// processes come and go may hold a loop).
bool DescendsFrom(pid_t pid, pid_t ancestor, const std::function<pid_t(pid_t)>& parent_of);

}  // namespace guard
