// Architecture-specific access to a stopped tracee's syscall registers.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstddef>
#include <cstdint>

namespace guard {

#if defined(__x86_64__)
struct SyscallRegs {
  user_regs_struct regs;
  long nr() const { return static_cast<long>(regs.orig_rax); }
  void args(uint64_t out[6]) const {
    out[0] = regs.rdi, out[1] = regs.rsi, out[2] = regs.rdx;
    out[3] = regs.r10, out[4] = regs.r8, out[5] = regs.r9;
  }
  // At a seccomp stop: skip the call and make it return -err.
  void SkipWithError(int err) {
    regs.orig_rax = static_cast<unsigned long long>(-1);
    regs.rax = static_cast<unsigned long long>(-static_cast<long long>(err));
  }
  // At a seccomp stop: skip the call and make it return `value` (>= 0, or a
  // negative errno).
  void SkipWithResult(long value) {
    regs.orig_rax = static_cast<unsigned long long>(-1);
    regs.rax = static_cast<unsigned long long>(value);
  }
};
// Offset of the return-value register in the USER area, for PTRACE_PEEKUSER.
constexpr size_t kReturnRegisterOffset = offsetof(user_regs_struct, rax);
#else
#error "guard's tracer supports x86_64 only so far"
#endif

}  // namespace guard
