// Reading the call a tracee is stopped at, at its seccomp stop: its number
// and arguments, with one PTRACE_GET_SYSCALL_INFO (Linux 5.3) instead of the
// whole register file. Most stops need nothing else: the registers are read
// (PTRACE_GETREGS) and written back only where a call is refused or answered
// by the tracer (syscall_regs.h).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace guard {

struct SeccompCall {
  long nr = -1;
  uint64_t args[6] = {};
};

// False when `tid` cannot be read (it was killed meanwhile). On a kernel
// without PTRACE_GET_SYSCALL_INFO (EIO) it falls back to PTRACE_GETREGS.
bool ReadSeccompCall(pid_t tid, SeccompCall* out);

}  // namespace guard
