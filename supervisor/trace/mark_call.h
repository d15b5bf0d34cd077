// The mark call: how a process inside a session asks the supervisor for a
// mark (`guard mark`), without any way to write guard's state itself
// (docs/security.md). It is a mkdirat(2) that the seccomp filter already
// stops at, with arguments no real mkdirat has:
//
//   mkdirat(kMarkDirfd, NULL, flags, label, label_length, kMarkMagic)
//
// The tracer recognises it at its seccomp stop, hands the label to the
// MutationSink (which appends a kMark record, in order with every call the
// session made before it), and skips the call, making it return the mark's
// number (>= 1) or a negative errno. A process nobody traces gets what the
// kernel gives for a NULL path, EFAULT: nothing is created, and the caller
// knows it is outside a session. The tracer is the one that answers, so the
// mark lands in the session that actually traces the caller, whatever its
// environment says.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "supervisor/base/mark_label.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/trace/syscall_regs.h"

namespace guard {

inline constexpr int kMarkDirfd = -0x6d61726b;  // "mark"; not AT_FDCWD, never an fd
inline constexpr uint64_t kMarkMagic = 0x6775617264ULL;  // "guard"
inline constexpr uint64_t kMarkStep = 1;  // flags: a step inside a turn (kStepMark)

// Whether a stopped call (number `nr`, arguments `args`) is the mark call.
bool IsMarkCall(long nr, const uint64_t args[6]);

// Answers the mark call of stopped tracee `tid`: reads its label, records
// the mark through `sink`, and sets `*regs` to skip the call with the
// result. The caller writes the registers back and resumes the tracee.
void AnswerMarkCall(pid_t tid, const uint64_t args[6], MutationSink* sink, SyscallRegs* regs);

// The caller's side: asks for a mark. Returns the mark's number (>= 1), or
// -errno: -EFAULT (or -ENOSYS) when no guard session traces this process.
long IssueMarkCall(std::string_view label, bool step);

}  // namespace guard
