#include "supervisor/trace/seccomp_call.h"

#include <sys/ptrace.h>

#include <cerrno>

#include "supervisor/trace/syscall_regs.h"

namespace guard {

bool ReadSeccompCall(pid_t tid, SeccompCall* out) {
  // Only the tracer's thread reads calls. Once the kernel says it lacks the
  // request, asking again at every stop would only cost a failed call.
  static bool has_syscall_info = true;
  if (has_syscall_info) {
    struct __ptrace_syscall_info info {};
    long n = ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info);
    if (n > 0 && info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
      out->nr = static_cast<long>(info.seccomp.nr);
      for (int i = 0; i < 6; ++i) out->args[i] = info.seccomp.args[i];
      return true;
    }
    if (n < 0 && errno == ESRCH) return false;  // killed meanwhile
    // EIO: a kernel older than 5.3. Anything else (never seen) is read the
    // old way too: a call the filter stopped must not run unexamined.
    if (n < 0 && errno == EIO) has_syscall_info = false;
  }
  SyscallRegs r;
  if (ptrace(PTRACE_GETREGS, tid, 0, &r.regs) != 0) return false;
  out->nr = r.nr();
  r.args(out->args);
  return true;
}

}  // namespace guard
