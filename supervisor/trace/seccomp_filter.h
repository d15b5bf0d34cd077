// The seccomp filter that decides which syscalls stop in the tracer.
//
// It traps (SECCOMP_RET_TRACE) exactly the syscalls that can change a file
// and those that change the view paths are resolved in, and fails those
// that would let a process write past it or outrank the tracer. Each is a
// row of common/syscall_table.h, which says what the filter does with it:
// open and openat stop only when their flags ask for writing, creating or
// truncating (tested in BPF); io_uring fails with ENOSYS; open_by_handle_at
// with write flags, a seccomp listener, pidfd_getfd, ptrace and
// process_vm_writev fail with EPERM. Signal calls sending SIGKILL or SIGSTOP
// and prlimit64 of another process stop, from anywhere, so that the tracer
// refuses them when they aim at guard (signal_call.h); fcntl(F_SETSIG) of
// those two fails with EPERM. Everything else runs at full speed,
// and so does a call made from the preload shim's syscall stub
// (common/syscall_stub_abi.h), which the shim has already captured: only
// the refusals still apply to it. That allowance is built only when the
// shim runs (--mode auto): without it a program could map code of its own
// at the stub's address and make any call there unstopped.
//
// The program is built in the supervisor (libseccomp allocates) and installed
// in the child by InstallFilter, which only calls prctl: safe after fork.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "common/status.h"

namespace guard {

struct FilterProgram {
  std::vector<sock_filter> instructions;
};

// Which calls run unstopped without the tracer's say.
enum class StubAllowance {
  kNone,  // --mode trace: every trapped call stops, wherever it is made
  kShim,  // --mode auto: also those made from the shim's stub, which captured them
};

Status BuildCaptureFilter(FilterProgram* out, StubAllowance stub = StubAllowance::kNone);

// Sets PR_SET_NO_NEW_PRIVS and installs `prog`. Async-signal-safe; returns
// an errno value, 0 on success.
int InstallFilter(const FilterProgram& prog);

}  // namespace guard
