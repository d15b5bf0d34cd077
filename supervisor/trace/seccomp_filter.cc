#include "supervisor/trace/seccomp_filter.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>

#include "common/file_io.h"
#include "common/syscall_table.h"
#include "common/syscall_stub_abi.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

struct CtxDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

// The number of `call` on this architecture: libseccomp is told numbers, so
// that a call newer than the libseccomp guard is built with is filtered too.
bool Native(const guard_syscall& call) { return call.nr >= 0; }

// Several rules for one syscall are OR'ed: `action` when any write flag is
// set in its o flags.
Status AddWriteFlagRules(scmp_filter_ctx ctx, const guard_syscall& call, uint32_t action) {
  const int flags_arg = guard_syscall_arg(&call, 'o');
  if (flags_arg < 0) return Status::InvalidArgument(std::string(call.name) + ": no flags argument in its row");
  for (unsigned long bit : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC}) {
    struct scmp_arg_cmp cmp = {static_cast<unsigned>(flags_arg), SCMP_CMP_MASKED_EQ, bit, bit};
    int rc = seccomp_rule_add_array(ctx, action, static_cast<int>(call.nr), 1, &cmp);
    if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  }
  return Status::Ok();
}

// A filter of the process's own that returns SECCOMP_RET_USER_NOTIF
// outranks guard's SECCOMP_RET_TRACE, and its listener can then let calls
// run with SECCOMP_USER_NOTIF_FLAG_CONTINUE without the tracer ever seeing
// them. A filter gets a listener only through seccomp(2) with
// SECCOMP_FILTER_FLAG_NEW_LISTENER: refuse exactly that (filters without a
// listener can only make calls fail, never run unseen).
Status AddListenerRule(scmp_filter_ctx ctx, const guard_syscall& call) {
  struct scmp_arg_cmp cmp[] = {
      {0, SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER, 0},
      {1, SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER, SECCOMP_FILTER_FLAG_NEW_LISTENER},
  };
  int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), static_cast<int>(call.nr), 2, cmp);
  if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  return Status::Ok();
}

// A signal call (kill, tkill...: its k argument) stops when it sends one of
// the two signals no process can catch or ignore: guard, which takes every
// other signal harmlessly (signal_relay.h), could otherwise be stopped or
// killed by a process of the session (docs/security.md). The tracer decides
// at the stop by the call's target (signal_call.h); signal 0, a liveness
// check, and every other signal never stop.
Status AddUncatchableSignalRules(scmp_filter_ctx ctx, const guard_syscall& call) {
  const int sig_arg = guard_syscall_arg(&call, 'k');
  if (sig_arg < 0) return Status::InvalidArgument(std::string(call.name) + ": no signal argument in its row");
  for (int sig : {SIGKILL, SIGSTOP}) {
    // The kernel takes the signal as an int: compare the low 32 bits.
    struct scmp_arg_cmp cmp = {static_cast<unsigned>(sig_arg), SCMP_CMP_MASKED_EQ, 0xffffffffu,
                               static_cast<scmp_datum_t>(sig)};
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_TRACE(0), static_cast<int>(call.nr), 1, &cmp);
    if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  }
  return Status::Ok();
}

// prlimit64 of another process with a new limit stops: a lower RLIMIT_CPU
// kills guard, a lower RLIMIT_FSIZE or RLIMIT_NOFILE fails its writes.
Status AddOtherProcessRule(scmp_filter_ctx ctx, const guard_syscall& call) {
  const int pid_arg = guard_syscall_arg(&call, 'I');
  const int new_arg = guard_syscall_arg(&call, 'n');
  if (pid_arg < 0 || new_arg < 0) return Status::InvalidArgument(std::string(call.name) + ": no I and n in its row");
  // The kernel takes the pid as an int: a pid whose low 32 bits are 0 with
  // others set stops too, and the tracer lets it run (it is the caller's).
  struct scmp_arg_cmp cmp[] = {
      {static_cast<unsigned>(pid_arg), SCMP_CMP_NE, 0, 0},
      {static_cast<unsigned>(new_arg), SCMP_CMP_NE, 0, 0},
  };
  int rc = seccomp_rule_add_array(ctx, SCMP_ACT_TRACE(0), static_cast<int>(call.nr), 2, cmp);
  if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  return Status::Ok();
}

// fcntl(F_SETSIG) of SIGKILL or SIGSTOP: the fd's owner, which F_SETOWN
// may make any process of the user (guard), would get it at the fd's next
// I/O, from no call the tracer could stop.
Status AddSetsigRules(scmp_filter_ctx ctx, const guard_syscall& call) {
  const int sig_arg = guard_syscall_arg(&call, 'k');
  if (sig_arg < 0) return Status::InvalidArgument(std::string(call.name) + ": no signal argument in its row");
  for (int sig : {SIGKILL, SIGSTOP}) {
    struct scmp_arg_cmp cmp[] = {
        {1, SCMP_CMP_MASKED_EQ, 0xffffffffu, F_SETSIG},
        {static_cast<unsigned>(sig_arg), SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<scmp_datum_t>(sig)},
    };
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), static_cast<int>(call.nr), 2, cmp);
    if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  }
  return Status::Ok();
}

// The rule of one row of the table (common/syscall_table.h).
Status AddRule(scmp_filter_ctx ctx, const guard_syscall& call) {
  int rc = 0;
  switch (call.filter) {
    case GUARD_SYSCALL_TRAP_WRITE:
      return AddWriteFlagRules(ctx, call, SCMP_ACT_TRACE(0));
    case GUARD_SYSCALL_EPERM_WRITE:
      return AddWriteFlagRules(ctx, call, SCMP_ACT_ERRNO(EPERM));
    case GUARD_SYSCALL_EPERM_LISTENER:
      return AddListenerRule(ctx, call);
    case GUARD_SYSCALL_TRAP_UNCATCHABLE:
      return AddUncatchableSignalRules(ctx, call);
    case GUARD_SYSCALL_TRAP_OTHER:
      return AddOtherProcessRule(ctx, call);
    case GUARD_SYSCALL_EPERM_SETSIG:
      return AddSetsigRules(ctx, call);
    case GUARD_SYSCALL_TRAP:
      rc = seccomp_rule_add(ctx, SCMP_ACT_TRACE(0), static_cast<int>(call.nr), 0);
      break;
    case GUARD_SYSCALL_EPERM:
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), static_cast<int>(call.nr), 0);
      break;
    case GUARD_SYSCALL_ENOSYS:
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), static_cast<int>(call.nr), 0);
      break;
    default:
      return Status::InvalidArgument(std::string(call.name) + ": no filter action in its row");
  }
  if (rc < 0) return Status::FromErrno(std::string("seccomp rule for ") + call.name, -rc);
  return Status::Ok();
}

// A call the filter fails rather than stops (every refusal of the table),
// or stops wherever it is made: the stub's allowance never lets it run
// unstopped. A signal call from the stub is no call the shim captured.
bool NeverFromTheStub(const guard_syscall& call) {
  return call.filter != GUARD_SYSCALL_TRAP && call.filter != GUARD_SYSCALL_TRAP_WRITE;
}

// The shim's stub allowance, woven into libseccomp's program: every
// SECCOMP_RET_TRACE of it becomes a jump to one block at the end, which
// returns ALLOW for a call whose instruction pointer is exactly the shim's
// stub return address (common/syscall_stub_abi.h), since the shim has
// already captured it, and TRACE for any other. Both 32-bit halves of the
// 64-bit instruction pointer are compared: a page mapped 4 GiB away must
// not pass. Only a call that would stop is looked at: what the filter fails
// (another ABI, the x32 bit, every call the table refuses) fails from the
// stub too, a call aimed at another process (a signal, a limit) stops from
// it too, so a program that jumps into the stub cannot use it to detach
// or outrank the tracer (docs/security.md). None of those has a TRACE of its own today; the
// block asks again all the same (the architecture, the x32 bit, the
// numbers refused), so that a rule made TRACE one day, or a second
// architecture, is stopped from the stub rather than let through. While no
// stub page is mapped at the address the allowance matches nothing.
//
// Why woven in rather than put first: the kernel runs no filter at all for
// a syscall whose verdict it can prove constant ALLOW from the number and
// the architecture alone (kernel/seccomp.c, seccomp_is_const_allow, Linux
// 5.11), and a program that loads the instruction pointer before it looks
// at the number proves nothing of the kind. With the check first, every
// call of every process of the session ran the whole program (getppid
// under --mode auto 121-130 ns against 85 under --mode trace, by hand,
// session 15); here read, write, close, mmap and the rest stay on the
// kernel's cached path, as they are without the shim. The block itself
// runs only on paths that stop anyway.
Status AddStubAllowance(std::vector<sock_filter>* prog) {
  std::vector<uint32_t> refused;
  for (const guard_syscall& call : guard_syscalls) {
    if (Native(call) && NeverFromTheStub(call)) refused.push_back(static_cast<uint32_t>(call.nr));
  }
  if (prog->empty() || BPF_CLASS(prog->back().code) != BPF_RET) {
    return Status::InvalidArgument("libseccomp's program does not end in a return");
  }
  const uint64_t ip = GUARD_STUB_RETURN_ADDRESS;
  constexpr uint32_t kIpLow = offsetof(seccomp_data, instruction_pointer);  // little-endian: low half first
  constexpr uint32_t kIpHigh = kIpLow + 4;
  const size_t block = prog->size();
  bool any = false;
  for (size_t pc = 0; pc < block; ++pc) {
    sock_filter& insn = (*prog)[pc];
    if (insn.code != (BPF_RET | BPF_K) || (insn.k & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_TRACE) continue;
    // Every rule traps with TRACE(0): the tracer reads no data from it.
    if (insn.k != SECCOMP_RET_TRACE) return Status::InvalidArgument("a TRACE with data in the filter");
    // A forward jump: to the block, past the program's own end.
    insn = BPF_STMT(BPF_JMP | BPF_JA, static_cast<uint32_t>(block - pc - 1));
    any = true;
  }
  if (!any) return Status::InvalidArgument("the filter traps nothing: no stub allowance to weave in");
  // The block; a failed test jumps to its last instruction, RET TRACE,
  // counted from each jump's own position.
  std::vector<sock_filter> v;
  const size_t n = 4 + refused.size() + 6;
  auto to_trace = [&](size_t at) { return static_cast<uint8_t>(n - at - 2); };
  v.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  v.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, to_trace(v.size())));
  v.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  v.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, to_trace(v.size()), 0));
  for (uint32_t nr : refused) v.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, to_trace(v.size()), 0));
  v.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpLow));
  v.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(ip), 0, to_trace(v.size())));
  v.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kIpHigh));
  v.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(ip >> 32), 0, to_trace(v.size())));
  v.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  v.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
  if (v.size() != n) return Status::InvalidArgument("stub allowance miscounted");
  prog->insert(prog->end(), v.begin(), v.end());
  if (prog->size() > BPF_MAXINSNS) return Status::InvalidArgument("filter too long with the stub allowance");
  return Status::Ok();
}

}  // namespace

Status BuildCaptureFilter(FilterProgram* out, StubAllowance stub) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Status::IOError("seccomp_init failed");
  // A syscall made through another ABI (int 0x80, x32) would bypass the rules
  // below: fail it with ENOSYS rather than let it through unseen.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
  // A binary tree of the syscall numbers rather than libseccomp's default
  // chain of tests one after the other: the program runs for every open and
  // every call that may stop, each of the shim's captured calls from its
  // stub included, and a read-only openat gets its verdict after 27
  // instructions rather than 70 (docs/performance.md, session 18). The calls
  // that never stop keep their constant verdict (the kernel's cache:
  // seccomp_filter_test checks both). Speed only: a libseccomp without the
  // attribute (before 2.5) builds the chain, which decides the same.
  (void)seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
  for (const guard_syscall& call : guard_syscalls) {
    if (Native(call)) GUARD_RETURN_IF_ERROR(AddRule(ctx.get(), call));
  }
  int rc = 0;

  // libseccomp 2.5 exports BPF only to an fd: go through a memfd.
  UniqueFd mem(memfd_create("guard-filter", MFD_CLOEXEC));
  if (!mem.valid()) return Status::FromErrno("memfd_create", errno);
  rc = seccomp_export_bpf(ctx.get(), mem.get());
  if (rc < 0) return Status::FromErrno("seccomp_export_bpf", -rc);
  off_t size = lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) return Status::IOError("bad BPF export size");
  out->instructions.resize(static_cast<size_t>(size) / sizeof(sock_filter));
  size_t got = 0;
  GUARD_RETURN_IF_ERROR(PreadFull(mem.get(), out->instructions.data(), static_cast<size_t>(size), 0,
                                  &got, "BPF export"));
  if (got != static_cast<size_t>(size)) return Status::IOError("short read of BPF export");
  if (stub == StubAllowance::kNone) return Status::Ok();
  return AddStubAllowance(&out->instructions);
}

int InstallFilter(const FilterProgram& prog) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog fprog;
  fprog.len = static_cast<unsigned short>(prog.instructions.size());
  fprog.filter = const_cast<sock_filter*>(prog.instructions.data());
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace guard
