// The capture filter (supervisor/trace/seccomp_filter.h), table-driven as
// gVisor's pkg/seccomp tests are: each row is a syscall (number, arguments,
// ABI) and the action the filter must take, checked by running the program
// BuildCaptureFilter generates in a forked child and making the call.
//
// The action is observed, not guessed from the call's result:
//  - ERRNO: the child first installs a probe filter that fails the row's
//    call with kProbeErrno, then guard's. Of two filters returning an errno
//    the most recently installed wins, and an errno beats trace and allow,
//    so the call fails with kProbeErrno unless guard's filter returned an
//    errno itself. (A kernel without io_uring, x32 or open_by_handle_at
//    permission would otherwise give the same ENOSYS or EPERM.)
//  - TRACE: the child is traced by the test (PTRACE_O_TRACESECCOMP), which
//    sees a seccomp stop for exactly the calls the filter traps, and skips
//    them. Without a tracer the kernel would fail them with ENOSYS.
//  - ALLOW: no stop and no errno of the filter's: the call ran, and its own
//    result is checked too. Paths point into a missing directory and fds
//    are invalid, so an allowed call fails with ENOENT or EBADF and changes
//    nothing, even if the filter wrongly let a mutating one through.
#define BOOST_TEST_MODULE seccomp_filter
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <string>
#include <utility>
#include <vector>


#include "common/syscall_stub_abi.h"
#include "common/syscall_table.h"
#include "supervisor/trace/seccomp_filter.h"
#include "supervisor/trace/syscall_regs.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::TempDir;

enum class Action { kAllow, kTrace, kErrno };

std::ostream& operator<<(std::ostream& os, Action a) {
  return os << (a == Action::kAllow ? "allow" : a == Action::kTrace ? "trace" : "errno");
}

// The ABI a call is made through: the native x86_64 `syscall`, x32
// (`syscall` with __X32_SYSCALL_BIT in the number) or int 0x80 (i386).
// The kStub ones are native calls made from a copy of the shim's syscall
// stub (common/syscall_stub_abi.h): at its fixed address; on a page 4 GiB
// above it, equal to it in the low 32 bits of every address; at another
// offset of the stub's own page.
enum class Abi { kX86_64, kX32, kI386, kStub, kStubLowHalfOnly, kStubOtherOffset };

constexpr long kX32Bit = 0x40000000;
constexpr int kProbeErrno = 4000;    // no real errno: only the probe returns it
constexpr int kSkippedErrno = 4001;  // what a traced call returns: the test skips it
constexpr int kAnyOwnErrno = -1;
// A pid no process has (above any pid_max), and a limit to pass by pointer.
constexpr uint64_t kNoPid = 0x3ffffff0;
const struct rlimit kLimit = {RLIM_INFINITY, RLIM_INFINITY};
constexpr long kFchmodat2 = 452;     // Linux 6.6; older headers lack SYS_fchmodat2
constexpr long kSetxattrat = 463;    // Linux 6.13
// i386 numbers (asm/unistd_32.h would clash with the x86_64 __NR_ names).
constexpr long kI386Creat = 8, kI386Getpid = 20, kI386Rename = 38;

struct Row {
  std::string what;
  Abi abi;
  long nr;                  // without the x32 bit
  uint64_t args[6];
  Action action;
  // kErrno: the filter's errno; kAllow: the call's own (0: success;
  // kAnyOwnErrno: whatever the kernel says, as long as the call ran).
  int err;
};

struct Outcome {
  long rc = 0;
  int err = 0;
};

long NumberSeen(const Row& row) { return row.abi == Abi::kX32 ? (row.nr | kX32Bit) : row.nr; }

using StubFn = long (*)(long, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

// Maps a copy of the stub at `page` + `offset` (in the child: the test
// process never maps one) and returns it, or nullptr.
StubFn MapStub(uint64_t page, size_t offset) {
  void* want = reinterpret_cast<void*>(page);
  void* got = mmap(want, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                   -1, 0);
  if (got != want) return nullptr;
  static const unsigned char kCode[] = GUARD_STUB_CODE;
  memset(got, 0xcc, GUARD_STUB_PAGE_SIZE);
  memcpy(static_cast<char*>(got) + offset, kCode, sizeof kCode);
  if (mprotect(got, GUARD_STUB_PAGE_SIZE, PROT_READ | PROT_EXEC) != 0) return nullptr;
  return reinterpret_cast<StubFn>(static_cast<char*>(got) + offset);
}

Outcome MakeCall(const Row& row) {
  Outcome o;
  const uint64_t* a = row.args;
  if (row.abi == Abi::kStub || row.abi == Abi::kStubLowHalfOnly || row.abi == Abi::kStubOtherOffset) {
    uint64_t page = GUARD_STUB_PAGE_ADDRESS + (row.abi == Abi::kStubLowHalfOnly ? (1ull << 32) : 0);
    StubFn stub = MapStub(page, row.abi == Abi::kStubOtherOffset ? 64 : 0);
    if (stub == nullptr) _exit(104);
    long rc = stub(row.nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    o.rc = rc;
    o.err = rc < 0 && rc >= -4095 ? static_cast<int>(-rc) : 0;
    return o;
  }
  if (row.abi == Abi::kI386) {
    long rc;
    __asm__ volatile("int $0x80"
                     : "=a"(rc)
                     : "a"(row.nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "D"(a[4])
                     : "memory");
    o.rc = rc;
    o.err = rc < 0 && rc >= -4095 ? static_cast<int>(-rc) : 0;
    return o;
  }
  errno = 0;
  o.rc = syscall(NumberSeen(row), a[0], a[1], a[2], a[3], a[4], a[5]);
  o.err = o.rc < 0 ? errno : 0;
  return o;
}

// Fails exactly the row's call (its ABI and number) with kProbeErrno.
int InstallProbe(const Row& row) {
  uint32_t arch = row.abi == Abi::kI386 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
  sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(NumberSeen(row)), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | kProbeErrno),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof insns / sizeof insns[0]), insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
  return 0;
}

struct Run {
  bool stopped = false;  // a seccomp stop for the row's call
  Outcome outcome;
};

// Forks a child that installs `prog` (after the probe, if asked; traced by
// this process, if asked), makes the row's call and reports its result
// through shared memory: any syscall it could report with might be the
// row's, which the probe fails.
Run RunInChild(const FilterProgram& prog, const Row& row, bool probe, bool traced) {
  Run run;
  void* shared = mmap(nullptr, sizeof(Outcome), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  BOOST_REQUIRE(shared != MAP_FAILED);
  Outcome* report = new (shared) Outcome();
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    if (traced && (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0 || raise(SIGSTOP) != 0)) _exit(101);
    if (probe && InstallProbe(row) != 0) _exit(102);
    if (InstallFilter(prog) != 0) _exit(103);
    *report = MakeCall(row);
    _exit(0);
  }
  int status = 0;
  if (traced) {
    BOOST_REQUIRE(waitpid(pid, &status, 0) == pid && WIFSTOPPED(status));
    BOOST_REQUIRE(ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL) == 0);
    BOOST_REQUIRE(ptrace(PTRACE_CONT, pid, 0, 0) == 0);
    for (;;) {
      BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
      if (!WIFSTOPPED(status)) break;
      int sig = 0;
      if ((status >> 16) == PTRACE_EVENT_SECCOMP) {
        SyscallRegs regs;
        BOOST_REQUIRE(ptrace(PTRACE_GETREGS, pid, 0, &regs.regs) == 0);
        BOOST_TEST(regs.nr() == NumberSeen(row), row.what << ": stopped in another call, " << regs.nr());
        run.stopped = true;
        regs.SkipWithError(kSkippedErrno);
        BOOST_REQUIRE(ptrace(PTRACE_SETREGS, pid, 0, &regs.regs) == 0);
      } else if (WSTOPSIG(status) != SIGTRAP) {
        sig = WSTOPSIG(status);
      }
      BOOST_REQUIRE(ptrace(PTRACE_CONT, pid, 0, sig) == 0);
    }
  } else {
    BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  }
  run.outcome = *report;
  munmap(shared, sizeof(Outcome));
  BOOST_REQUIRE_MESSAGE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                        row.what << ": the child failed, wait status " << status);
  return run;
}

// The filter of --mode trace (kNone) or of --mode auto (kShim).
const FilterProgram& Filter(StubAllowance stub = StubAllowance::kShim) {
  static const FilterProgram with_shim = [] {
    FilterProgram p;
    Status s = BuildCaptureFilter(&p, StubAllowance::kShim);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    BOOST_REQUIRE(!p.instructions.empty());
    return p;
  }();
  static const FilterProgram trace_only = [] {
    FilterProgram p;
    Status s = BuildCaptureFilter(&p, StubAllowance::kNone);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    BOOST_REQUIRE(!p.instructions.empty());
    return p;
  }();
  return stub == StubAllowance::kShim ? with_shim : trace_only;
}

// Checks that the filter takes each row's action, and for an allowed call
// that the call ran and gave its own result.
void Check(const std::vector<Row>& rows, StubAllowance stub = StubAllowance::kShim) {
  for (const Row& row : rows) {
    BOOST_TEST_CONTEXT(row.what) {
      Run probed = RunInChild(Filter(stub), row, /*probe=*/true, /*traced=*/false);
      Action seen = Action::kErrno;
      Outcome own;
      if (probed.outcome.err == kProbeErrno) {
        Run traced = RunInChild(Filter(stub), row, /*probe=*/false, /*traced=*/true);
        seen = traced.stopped ? Action::kTrace : Action::kAllow;
        own = traced.outcome;
        if (traced.stopped) BOOST_TEST(own.err == kSkippedErrno);
      }
      BOOST_TEST(seen == row.action);
      if (seen == Action::kErrno && row.action == Action::kErrno) {
        BOOST_TEST(probed.outcome.err == row.err, "errno " << probed.outcome.err << ", expected " << row.err);
      }
      if (seen == Action::kAllow && row.action == Action::kAllow && row.err != kAnyOwnErrno) {
        BOOST_TEST(own.err == row.err, "the call ran and gave errno " << own.err << " (" << strerror(own.err)
                                                                        << "), expected " << row.err);
      }
    }
  }
}

// Paths for the rows: under a directory that does not exist, so that no
// call, allowed or not, can change anything.
struct Paths {
  TempDir tmp;
  std::string dir = tmp.path;
  std::string missing = tmp.path + "/absent/file";
  std::string missing2 = tmp.path + "/absent/other";
  uint64_t Dir() const { return reinterpret_cast<uint64_t>(dir.c_str()); }
  uint64_t Missing() const { return reinterpret_cast<uint64_t>(missing.c_str()); }
  uint64_t Missing2() const { return reinterpret_cast<uint64_t>(missing2.c_str()); }
};

constexpr uint64_t kCwd = static_cast<uint64_t>(AT_FDCWD);
constexpr uint64_t kBadFd = static_cast<uint64_t>(-1);
// Bits above the 32 of an int: the kernel ignores them in open flags.
constexpr uint64_t kHighBits = 0xdead000000000000ull;

BOOST_AUTO_TEST_CASE(ReadOnlyOpensRunUnstopped) {
  Paths p;
  Check({
      {"open O_RDONLY", Abi::kX86_64, SYS_open, {p.Missing(), O_RDONLY}, Action::kAllow, ENOENT},
      {"open O_RDONLY|O_DIRECTORY of a directory", Abi::kX86_64, SYS_open, {p.Dir(), O_RDONLY | O_DIRECTORY},
       Action::kAllow, 0},
      {"open O_RDONLY|O_CLOEXEC|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY", Abi::kX86_64, SYS_open,
       {p.Missing(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY}, Action::kAllow, ENOENT},
      {"open O_RDONLY|O_APPEND", Abi::kX86_64, SYS_open, {p.Missing(), O_RDONLY | O_APPEND}, Action::kAllow,
       ENOENT},
      {"open O_PATH", Abi::kX86_64, SYS_open, {p.Missing(), O_PATH}, Action::kAllow, ENOENT},
      // O_TMPFILE includes O_DIRECTORY and needs a write flag: without one
      // the kernel refuses it by itself.
      {"open O_TMPFILE without a write flag", Abi::kX86_64, SYS_open, {p.Dir(), O_TMPFILE | O_RDONLY, 0600},
       Action::kAllow, EINVAL},
      {"open O_RDONLY with high bits the kernel ignores", Abi::kX86_64, SYS_open,
       {p.Missing(), kHighBits | O_RDONLY}, Action::kAllow, ENOENT},
      {"openat O_RDONLY", Abi::kX86_64, SYS_openat, {kCwd, p.Missing(), O_RDONLY}, Action::kAllow, ENOENT},
      // The flags are the third argument: a mode with every bit set does not count.
      {"openat O_RDONLY with mode 07777", Abi::kX86_64, SYS_openat, {kCwd, p.Missing(), O_RDONLY, 07777},
       Action::kAllow, ENOENT},
      {"openat O_RDONLY|O_DIRECTORY through a dirfd", Abi::kX86_64, SYS_openat,
       {kBadFd, reinterpret_cast<uint64_t>("x"), O_RDONLY | O_DIRECTORY}, Action::kAllow, EBADF},
      // (Without CAP_DAC_READ_SEARCH the kernel refuses it by itself.)
      {"open_by_handle_at O_RDONLY", Abi::kX86_64, SYS_open_by_handle_at, {kBadFd, 0, O_RDONLY}, Action::kAllow,
       kAnyOwnErrno},
  });
}

BOOST_AUTO_TEST_CASE(OpensThatWriteCreateOrTruncateStopInTheTracer) {
  Paths p;
  std::vector<Row> rows;
  struct Flags {
    const char* name;
    uint64_t flags;
  };
  for (Flags f : std::vector<Flags>{{"O_WRONLY", O_WRONLY},
                                    {"O_RDWR", O_RDWR},
                                    {"O_CREAT", O_RDONLY | O_CREAT},
                                    {"O_TRUNC", O_RDONLY | O_TRUNC},
                                    {"O_WRONLY|O_APPEND", O_WRONLY | O_APPEND},
                                    {"O_WRONLY|O_CREAT|O_EXCL", O_WRONLY | O_CREAT | O_EXCL},
                                    {"O_RDWR|O_CREAT|O_TRUNC|O_CLOEXEC", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC},
                                    {"O_TMPFILE|O_RDWR", O_TMPFILE | O_RDWR},
                                    {"O_WRONLY with high bits", kHighBits | O_WRONLY}}) {
    rows.push_back({std::string("open ") + f.name, Abi::kX86_64, SYS_open, {p.Missing(), f.flags, 0644},
                    Action::kTrace, 0});
    rows.push_back({std::string("openat ") + f.name, Abi::kX86_64, SYS_openat, {kCwd, p.Missing(), f.flags, 0644},
                    Action::kTrace, 0});
  }
  rows.push_back({"creat", Abi::kX86_64, SYS_creat, {p.Missing(), 0644}, Action::kTrace, 0});
  // openat2 keeps its flags in memory, out of BPF's reach: always stopped
  // (the decoder lets a read-only one run).
  static open_how read_only{};
  read_only.flags = O_RDONLY;
  rows.push_back({"openat2 O_RDONLY", Abi::kX86_64, SYS_openat2,
                  {kCwd, p.Missing(), reinterpret_cast<uint64_t>(&read_only), sizeof read_only}, Action::kTrace, 0});
  Check(rows);
}

BOOST_AUTO_TEST_CASE(CallsThatAlwaysChangeAFileStopInTheTracer) {
  Paths p;
  uint64_t m = p.Missing(), m2 = p.Missing2();
  Check({
      {"truncate", Abi::kX86_64, SYS_truncate, {m, 0}, Action::kTrace, 0},
      {"ftruncate", Abi::kX86_64, SYS_ftruncate, {kBadFd, 0}, Action::kTrace, 0},
      {"rename", Abi::kX86_64, SYS_rename, {m, m2}, Action::kTrace, 0},
      {"renameat", Abi::kX86_64, SYS_renameat, {kCwd, m, kCwd, m2}, Action::kTrace, 0},
      {"renameat2", Abi::kX86_64, SYS_renameat2, {kCwd, m, kCwd, m2, 0}, Action::kTrace, 0},
      {"renameat2 RENAME_EXCHANGE", Abi::kX86_64, SYS_renameat2, {kCwd, m, kCwd, m2, 2}, Action::kTrace, 0},
      {"unlink", Abi::kX86_64, SYS_unlink, {m}, Action::kTrace, 0},
      {"unlinkat", Abi::kX86_64, SYS_unlinkat, {kCwd, m, 0}, Action::kTrace, 0},
      {"unlinkat AT_REMOVEDIR", Abi::kX86_64, SYS_unlinkat, {kCwd, m, AT_REMOVEDIR}, Action::kTrace, 0},
      {"rmdir", Abi::kX86_64, SYS_rmdir, {m}, Action::kTrace, 0},
      {"mkdir", Abi::kX86_64, SYS_mkdir, {m, 0755}, Action::kTrace, 0},
      {"mkdirat", Abi::kX86_64, SYS_mkdirat, {kCwd, m, 0755}, Action::kTrace, 0},
      {"symlink", Abi::kX86_64, SYS_symlink, {m2, m}, Action::kTrace, 0},
      {"symlinkat", Abi::kX86_64, SYS_symlinkat, {m2, kCwd, m}, Action::kTrace, 0},
      {"link", Abi::kX86_64, SYS_link, {m, m2}, Action::kTrace, 0},
      {"linkat", Abi::kX86_64, SYS_linkat, {kCwd, m, kCwd, m2, 0}, Action::kTrace, 0},
      {"chmod", Abi::kX86_64, SYS_chmod, {m, 0600}, Action::kTrace, 0},
      {"fchmod", Abi::kX86_64, SYS_fchmod, {kBadFd, 0600}, Action::kTrace, 0},
      {"fchmodat", Abi::kX86_64, SYS_fchmodat, {kCwd, m, 0600}, Action::kTrace, 0},
      {"fchmodat2", Abi::kX86_64, kFchmodat2, {kCwd, m, 0600, 0}, Action::kTrace, 0},
      {"mknod", Abi::kX86_64, SYS_mknod, {m, S_IFIFO | 0600, 0}, Action::kTrace, 0},
      {"mknodat", Abi::kX86_64, SYS_mknodat, {kCwd, m, S_IFIFO | 0600, 0}, Action::kTrace, 0},
      // They change modes as a side effect (the tracer looks at the name
      // or the file's set-id bits).
      {"chown", Abi::kX86_64, SYS_chown, {m, 0, 0}, Action::kTrace, 0},
      {"lchown", Abi::kX86_64, SYS_lchown, {m, 0, 0}, Action::kTrace, 0},
      {"fchown", Abi::kX86_64, SYS_fchown, {kBadFd, 0, 0}, Action::kTrace, 0},
      {"fchownat", Abi::kX86_64, SYS_fchownat, {kCwd, m, 0, 0, 0}, Action::kTrace, 0},
      {"setxattr", Abi::kX86_64, SYS_setxattr, {m, m2, 0, 0, 0}, Action::kTrace, 0},
      {"lsetxattr", Abi::kX86_64, SYS_lsetxattr, {m, m2, 0, 0, 0}, Action::kTrace, 0},
      {"fsetxattr", Abi::kX86_64, SYS_fsetxattr, {kBadFd, m2, 0, 0, 0}, Action::kTrace, 0},
      {"setxattrat", Abi::kX86_64, kSetxattrat, {kCwd, m, 0, m2, 0, 0}, Action::kTrace, 0},
      // A unix socket's bind makes a file; the decoder tells the families apart.
      {"bind", Abi::kX86_64, SYS_bind, {kBadFd, 0, 0}, Action::kTrace, 0},
  });
}

// They change the view paths are resolved in, which the tracer keeps from
// call to call only because it sees them (tracee_views.h). (The test's
// tracer skips them: nothing changes.)
BOOST_AUTO_TEST_CASE(CallsThatChangeAProcessesViewOfTheFilesystemStopInTheTracer) {
  Paths p;
  uint64_t m = p.Missing(), m2 = p.Missing2();
  Check({
      {"chroot", Abi::kX86_64, SYS_chroot, {m}, Action::kTrace, 0},
      {"pivot_root", Abi::kX86_64, SYS_pivot_root, {m, m2}, Action::kTrace, 0},
      {"unshare", Abi::kX86_64, SYS_unshare, {0}, Action::kTrace, 0},
      {"setns", Abi::kX86_64, SYS_setns, {kBadFd, 0}, Action::kTrace, 0},
  });
}

// It names no path whose pre-image guard could save: refused, fail closed.
BOOST_AUTO_TEST_CASE(OpenByHandleForWritingFailsWithEperm) {
  Check({
      {"open_by_handle_at O_WRONLY", Abi::kX86_64, SYS_open_by_handle_at, {kBadFd, 0, O_WRONLY}, Action::kErrno,
       EPERM},
      {"open_by_handle_at O_RDWR", Abi::kX86_64, SYS_open_by_handle_at, {kBadFd, 0, O_RDWR}, Action::kErrno, EPERM},
      {"open_by_handle_at O_CREAT", Abi::kX86_64, SYS_open_by_handle_at, {kBadFd, 0, O_CREAT}, Action::kErrno,
       EPERM},
      {"open_by_handle_at O_TRUNC", Abi::kX86_64, SYS_open_by_handle_at, {kBadFd, 0, O_TRUNC}, Action::kErrno,
       EPERM},
  });
}

// io_uring could carry writes past the filter, through a ring of the
// session's or one inherited from outside it.
BOOST_AUTO_TEST_CASE(IoUringFailsWithEnosys) {
  Check({
      {"io_uring_setup", Abi::kX86_64, SYS_io_uring_setup, {1, 0}, Action::kErrno, ENOSYS},
      {"io_uring_enter", Abi::kX86_64, SYS_io_uring_enter, {kBadFd, 1, 0, 0, 0, 0}, Action::kErrno, ENOSYS},
      {"io_uring_register", Abi::kX86_64, SYS_io_uring_register, {kBadFd, 0, 0, 0}, Action::kErrno, ENOSYS},
  });
}

// What would let a process outrank or get around the tracer
// (docs/security.md) fails with EPERM; the harmless forms of seccomp(2) run.
BOOST_AUTO_TEST_CASE(CallsThatWouldGetPastTheTracerFailWithEperm) {
  static const char kByte = 0;
  uint64_t byte = reinterpret_cast<uint64_t>(&kByte);
  Check({
      {"pidfd_getfd", Abi::kX86_64, SYS_pidfd_getfd, {kBadFd, 0, 0}, Action::kErrno, EPERM},
      {"ptrace", Abi::kX86_64, SYS_ptrace, {static_cast<uint64_t>(-1), 0, 0, 0}, Action::kErrno, EPERM},
      {"process_vm_writev", Abi::kX86_64, SYS_process_vm_writev, {0, 0, 0, 0, 0, 0}, Action::kErrno, EPERM},
      // A listener's filter outranks the tracer and can let calls run unseen.
      {"seccomp SET_MODE_FILTER with NEW_LISTENER", Abi::kX86_64, SYS_seccomp,
       {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0}, Action::kErrno, EPERM},
      {"seccomp SET_MODE_FILTER with NEW_LISTENER|TSYNC", Abi::kX86_64, SYS_seccomp,
       {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC, 0}, Action::kErrno,
       EPERM},
      // Without a listener a filter can only make calls fail (the null
      // program fails the call by itself).
      {"seccomp SET_MODE_FILTER without a listener", Abi::kX86_64, SYS_seccomp, {SECCOMP_SET_MODE_FILTER, 0, 0},
       Action::kAllow, EFAULT},
      // The flag outside SET_MODE_FILTER means nothing (and the kernel
      // refuses strict mode with flags, so the child stays as it is).
      {"seccomp SET_MODE_STRICT with the listener flag", Abi::kX86_64, SYS_seccomp,
       {SECCOMP_SET_MODE_STRICT, SECCOMP_FILTER_FLAG_NEW_LISTENER, byte}, Action::kAllow, EINVAL},
  });
}

// The filter's rules are for x86_64 numbers: a call through another entry
// point would bypass them, so it fails with ENOSYS, whatever the call.
BOOST_AUTO_TEST_CASE(CallsThroughOtherAbisFailWithEnosys) {
  Paths p;
  std::vector<Row> rows = {
      {"x32 creat", Abi::kX32, SYS_creat, {p.Missing(), 0644}, Action::kErrno, ENOSYS},
      {"x32 getpid", Abi::kX32, SYS_getpid, {}, Action::kErrno, ENOSYS},
  };
  // int 0x80 is a system call only where the kernel has IA-32 emulation;
  // elsewhere it is a fault, and there is nothing to filter.
  Row probe{"int 0x80 getpid, unfiltered", Abi::kI386, kI386Getpid, {}, Action::kAllow, 0};
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) _exit(MakeCall(probe).rc == getpid() ? 0 : 1);
  int status = 0;
  BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    rows.push_back({"int 0x80 getpid", Abi::kI386, kI386Getpid, {}, Action::kErrno, ENOSYS});
    rows.push_back({"int 0x80 creat", Abi::kI386, kI386Creat, {0, 0644}, Action::kErrno, ENOSYS});
    rows.push_back({"int 0x80 rename", Abi::kI386, kI386Rename, {0, 0}, Action::kErrno, ENOSYS});
  } else {
    BOOST_TEST_MESSAGE("this kernel has no IA-32 emulation: the int 0x80 rows are left out");
  }
  Check(rows);
}

// Everything else runs at full speed: writes through an fd opened for
// writing (its pre-image was saved at the open), reads, and the rest.
BOOST_AUTO_TEST_CASE(CallsThatChangeNoFileByNameRunUnstopped) {
  Paths p;
  static const char kByte = 'x';
  uint64_t byte = reinterpret_cast<uint64_t>(&kByte);
  Check({
      {"getpid", Abi::kX86_64, SYS_getpid, {}, Action::kAllow, 0},
      {"write", Abi::kX86_64, SYS_write, {kBadFd, byte, 1}, Action::kAllow, EBADF},
      {"pwrite64", Abi::kX86_64, SYS_pwrite64, {kBadFd, byte, 1, 0}, Action::kAllow, EBADF},
      {"fallocate", Abi::kX86_64, SYS_fallocate, {kBadFd, 0, 0, 1}, Action::kAllow, EBADF},
      {"read", Abi::kX86_64, SYS_read, {kBadFd, byte, 1}, Action::kAllow, EBADF},
      {"close", Abi::kX86_64, SYS_close, {kBadFd}, Action::kAllow, EBADF},
      {"stat", Abi::kX86_64, SYS_stat, {p.Missing(), 0}, Action::kAllow, ENOENT},
      {"a number no kernel knows", Abi::kX86_64, 4000, {}, Action::kAllow, ENOSYS},
  });
}

// The shim's stub (common/syscall_stub_abi.h) makes the calls the shim has
// already captured: they run unstopped, but only from exactly the stub's
// return address, compared in all 64 bits; and what the filter refuses it
// still refuses there.
BOOST_AUTO_TEST_CASE(CallsFromTheShimStubRunUnstoppedAndOnlyFromThere) {
  Paths p;
  uint64_t m = p.Missing(), m2 = p.Missing2();
  Check({
      {"unlink from the stub", Abi::kStub, SYS_unlink, {m}, Action::kAllow, ENOENT},
      {"openat O_RDWR|O_CREAT from the stub", Abi::kStub, SYS_openat, {kCwd, m, O_RDWR | O_CREAT, 0644},
       Action::kAllow, ENOENT},
      {"renameat2 from the stub", Abi::kStub, SYS_renameat2, {kCwd, m, kCwd, m2, 0}, Action::kAllow, ENOENT},
      {"getpid from the stub", Abi::kStub, SYS_getpid, {}, Action::kAllow, 0},
      {"unlink from a page equal in the low 32 bits", Abi::kStubLowHalfOnly, SYS_unlink, {m}, Action::kTrace, 0},
      {"openat O_WRONLY from a page equal in the low 32 bits", Abi::kStubLowHalfOnly, SYS_openat,
       {kCwd, m, O_WRONLY}, Action::kTrace, 0},
      {"unlink from another offset of the stub's page", Abi::kStubOtherOffset, SYS_unlink, {m}, Action::kTrace, 0},
      {"ptrace from the stub", Abi::kStub, SYS_ptrace, {static_cast<uint64_t>(-1), 0, 0, 0}, Action::kErrno, EPERM},
      {"io_uring_setup from the stub", Abi::kStub, SYS_io_uring_setup, {1, 0}, Action::kErrno, ENOSYS},
      {"process_vm_writev from the stub", Abi::kStub, SYS_process_vm_writev, {0, 0, 0, 0, 0, 0}, Action::kErrno,
       EPERM},
      {"seccomp NEW_LISTENER from the stub", Abi::kStub, SYS_seccomp,
       {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0}, Action::kErrno, EPERM},
      {"open_by_handle_at O_WRONLY from the stub", Abi::kStub, SYS_open_by_handle_at, {kBadFd, 0, O_WRONLY},
       Action::kErrno, EPERM},
      {"x32 creat from the stub", Abi::kStub, SYS_creat | kX32Bit, {m, 0644}, Action::kErrno, ENOSYS},
      // Aimed at another process: no call the shim captured.
      {"kill SIGSTOP from the stub", Abi::kStub, SYS_kill, {kNoPid, SIGSTOP}, Action::kTrace, 0},
      {"tgkill SIGKILL from the stub", Abi::kStub, SYS_tgkill, {kNoPid, kNoPid, SIGKILL}, Action::kTrace, 0},
      {"prlimit64 of another from the stub", Abi::kStub, SYS_prlimit64,
       {kNoPid, RLIMIT_CPU, reinterpret_cast<uint64_t>(&kLimit), 0}, Action::kTrace, 0},
      {"kill SIGTERM from the stub", Abi::kStub, SYS_kill, {kNoPid, SIGTERM}, Action::kAllow, ESRCH},
  });
}

// The table (common/syscall_table.h) by construction: each row's call,
// with arguments made from its roles (paths in a missing directory, fds
// invalid), gets what the row's filter column says. A call added to the
// table is tested here without a line of its own.
std::vector<Row> RowsOfTheTable(const Paths& p) {
  std::vector<Row> rows;
  for (const guard_syscall& call : guard_syscalls) {
    if (call.nr < 0) continue;  // not on this architecture
    Row row{call.name, Abi::kX86_64, call.nr, {}, Action::kTrace, 0};
    for (int i = 0; call.args[i] != '\0'; ++i) {
      switch (call.args[i]) {
        case 'p': row.args[i] = p.Missing(); break;
        case 'P': case 't': row.args[i] = p.Missing2(); break;
        case 'd': case 'D': row.args[i] = kCwd; break;
        case 'f': row.args[i] = kBadFd; break;
        case 'm': row.args[i] = 0600; break;
        case 'i': case 'I': case 'j': row.args[i] = kNoPid; break;
        case 'k': row.args[i] = SIGKILL; break;
        case 'n': row.args[i] = reinterpret_cast<uint64_t>(&kLimit); break;
        default: break;
      }
    }
    const int o = guard_syscall_arg(&call, 'o');
    auto with_flags = [&](const char* what, uint64_t flags, Action action, int err) {
      Row r = row;
      r.what += what;
      r.args[o] = flags;
      r.action = action, r.err = err;
      return r;
    };
    switch (call.filter) {
      case GUARD_SYSCALL_TRAP:
        rows.push_back(row);
        break;
      case GUARD_SYSCALL_TRAP_WRITE:
        rows.push_back(with_flags(" O_WRONLY", O_WRONLY, Action::kTrace, 0));
        rows.push_back(with_flags(" O_RDONLY", O_RDONLY, Action::kAllow, kAnyOwnErrno));
        break;
      case GUARD_SYSCALL_EPERM_WRITE:
        rows.push_back(with_flags(" O_RDWR", O_RDWR, Action::kErrno, EPERM));
        rows.push_back(with_flags(" O_RDONLY", O_RDONLY, Action::kAllow, kAnyOwnErrno));
        break;
      case GUARD_SYSCALL_EPERM_LISTENER:
        row.args[0] = SECCOMP_SET_MODE_FILTER, row.args[1] = SECCOMP_FILTER_FLAG_NEW_LISTENER;
        row.action = Action::kErrno, row.err = EPERM;
        rows.push_back(row);
        break;
      case GUARD_SYSCALL_EPERM:
      case GUARD_SYSCALL_ENOSYS:
        row.action = Action::kErrno, row.err = call.filter == GUARD_SYSCALL_EPERM ? EPERM : ENOSYS;
        rows.push_back(row);
        break;
      case GUARD_SYSCALL_TRAP_UNCATCHABLE:
      case GUARD_SYSCALL_EPERM_SETSIG: {
        const int k = guard_syscall_arg(&call, 'k');
        const bool setsig = call.filter == GUARD_SYSCALL_EPERM_SETSIG;
        if (setsig) row.args[1] = F_SETSIG;
        for (int sig : {SIGKILL, SIGSTOP}) {
          Row r = row;
          r.what += std::string(" ") + strsignal(sig);
          r.args[k] = static_cast<uint64_t>(sig);
          if (setsig) r.action = Action::kErrno, r.err = EPERM;
          rows.push_back(r);
        }
        // Every other signal runs: guard takes it harmlessly.
        Row r = row;
        r.what += " SIGTERM";
        r.args[k] = SIGTERM;
        r.action = Action::kAllow, r.err = kAnyOwnErrno;
        rows.push_back(r);
        break;
      }
      case GUARD_SYSCALL_TRAP_OTHER: {
        rows.push_back(row);  // another process, a new value: stops
        Row own = row;
        own.what += " of the caller";
        own.args[guard_syscall_arg(&call, 'I')] = 0;
        own.args[guard_syscall_arg(&call, 'n')] = 0;  // and only read, so that it changes nothing
        own.action = Action::kAllow, own.err = 0;
        rows.push_back(own);
        Row read = row;
        read.what += " only read";
        read.args[guard_syscall_arg(&call, 'n')] = 0;
        read.action = Action::kAllow, read.err = ESRCH;
        rows.push_back(read);
        break;
      }
      default:
        BOOST_FAIL(call.name << ": a filter column the test does not know");
    }
  }
  return rows;
}

BOOST_AUTO_TEST_CASE(EveryCallOfTheTableIsFilteredAsItsRowSays) {
  Paths p;
  std::vector<Row> rows = RowsOfTheTable(p);
  BOOST_TEST(rows.size() >= 50u);
  Check(rows);
}

// Every row is one the filter, the decoder and the shim can read: known
// roles, a size after each struct, flags where the filter tests them, and
// no number twice.
BOOST_AUTO_TEST_CASE(EveryRowOfTheTableIsWellFormed) {
  std::vector<long> seen;
  for (const guard_syscall& call : guard_syscalls) {
    BOOST_TEST_CONTEXT(call.name) {
      std::string args = call.args;
      BOOST_TEST(args.size() <= 6u);
      BOOST_TEST(args.find_first_not_of("dpDPtfomxvhasziIjkn.") == std::string::npos, args);
      if (call.filter == GUARD_SYSCALL_TRAP_UNCATCHABLE || call.filter == GUARD_SYSCALL_EPERM_SETSIG) {
        BOOST_TEST(guard_syscall_arg(&call, 'k') >= 0);
      }
      if (call.filter == GUARD_SYSCALL_TRAP_OTHER) {
        BOOST_TEST((guard_syscall_arg(&call, 'I') >= 0 && guard_syscall_arg(&call, 'n') >= 0));
      }
      for (char role : std::string("dpDPtfomxvhasziIjkn")) BOOST_TEST(args.find(role) == args.rfind(role), role);
      for (size_t i = 0; i < args.size(); ++i) {
        bool sized = args[i] == 'h' || args[i] == 'v' || args[i] == 'a' || args[i] == 's';
        BOOST_TEST((sized == (i + 1 < args.size() && args[i + 1] == 'z')), "the size after " << args[i]);
      }
      // An xattr's value is either in a register (v) or in a struct (a).
      if (args.find('x') != std::string::npos) {
        BOOST_TEST((args.find('v') != std::string::npos) != (args.find('a') != std::string::npos));
      }
      if (call.filter == GUARD_SYSCALL_TRAP_WRITE || call.filter == GUARD_SYSCALL_EPERM_WRITE) {
        BOOST_TEST(guard_syscall_arg(&call, 'o') >= 0);
      }
      if (call.action != GUARD_ACTION_None) BOOST_TEST(call.filter <= GUARD_SYSCALL_TRAP_WRITE);
      // The shim classifies from plain arguments only, and only changes.
      if (call.shim) {
        BOOST_TEST(call.action != GUARD_ACTION_None);
        BOOST_TEST(args.find_first_of("has") == std::string::npos);
      }
      BOOST_TEST((guard_syscall_find(call.nr) == (call.nr >= 0 ? &call : nullptr)));
      for (long nr : seen) BOOST_TEST(nr != call.nr);
      seen.push_back(call.nr);
    }
  }
}

// The numbers of each row are the kernel's on both architectures, as
// libseccomp knows them (a name it does not know yet is left unchecked).
BOOST_AUTO_TEST_CASE(TheTablesNumbersAreTheKernelsOnEachArchitecture) {
  struct Numbers {
    const char* name;
    long x86_64, aarch64;
  };
#define GUARD_NUMBERS(name, x86_64, aarch64, filter, action, args, fixed, shim) {#name, x86_64, aarch64},
  const Numbers rows[] = {GUARD_SYSCALLS(GUARD_NUMBERS)};
#undef GUARD_NUMBERS
  size_t checked = 0;
  for (const Numbers& row : rows) {
    for (auto [arch, nr] : {std::pair{SCMP_ARCH_X86_64, row.x86_64}, std::pair{SCMP_ARCH_AARCH64, row.aarch64}}) {
      int known = seccomp_syscall_resolve_name_arch(arch, row.name);
      if (known == __NR_SCMP_ERROR) {
        BOOST_TEST_MESSAGE(row.name << ": unknown to this libseccomp, not checked");
        continue;
      }
      ++checked;
      // libseccomp gives a call an architecture lacks a negative number.
      if (nr == GUARD_NO_SYSCALL) {
        BOOST_TEST(known < 0, row.name << " on " << arch << ": " << known);
      } else {
        BOOST_TEST(known == nr, row.name << " on " << arch);
      }
    }
  }
  BOOST_TEST(checked >= 90u);
}

// Where a walk of the program with only the number and the architecture
// known stops: at a return (`returned`, its value), or at the first
// instruction that needs more (a load of an argument or of the instruction
// pointer); `steps` instructions ran before it.
struct KnownWalk {
  size_t steps = 0;
  bool returned = false;
  uint32_t value = 0;
};

// Follows `prog` for syscall `nr` of x86_64 as the kernel's test of a
// constant verdict does (kernel/seccomp.c, seccomp_is_const_allow, Linux
// 5.11), which gives up at any other load.
KnownWalk WalkKnown(const std::vector<sock_filter>& prog, uint32_t nr) {
  KnownWalk w;
  uint32_t reg = 0;
  for (size_t pc = 0; pc < prog.size(); ++pc, ++w.steps) {
    const sock_filter& insn = prog[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k == offsetof(seccomp_data, nr)) {
          reg = nr;
        } else if (insn.k == offsetof(seccomp_data, arch)) {
          reg = AUDIT_ARCH_X86_64;
        } else {
          return w;
        }
        break;
      case BPF_RET | BPF_K:
        w.returned = true;
        w.value = insn.k;
        return w;
      case BPF_JMP | BPF_JA:
        pc += insn.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        pc += reg == insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += reg >= insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += reg > insn.k ? insn.jt : insn.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += (reg & insn.k) != 0 ? insn.jt : insn.jf;
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        reg &= insn.k;
        break;
      default:
        return w;
    }
  }
  return w;
}

// The kernel runs no filter for a syscall whose verdict it can prove to be
// ALLOW from the number and the architecture alone. The calls the filter
// never stops must stay provable, with the shim's stub allowance as
// without it: a check of the instruction pointer ahead of the number made
// every call of a session under --mode auto run the whole program.
bool ConstAllow(const std::vector<sock_filter>& prog, uint32_t nr) {
  KnownWalk w = WalkKnown(prog, nr);
  return w.returned && w.value == SECCOMP_RET_ALLOW;
}

BOOST_AUTO_TEST_CASE(CallsTheFilterNeverStopsAreLeftToTheKernelsCacheWithOrWithoutTheShim) {
  for (StubAllowance stub : {StubAllowance::kShim, StubAllowance::kNone}) {
    FilterProgram p;
    BOOST_REQUIRE(BuildCaptureFilter(&p, stub).ok());
    for (long nr : {SYS_read, SYS_write, SYS_close, SYS_fstat, SYS_newfstatat, SYS_mmap, SYS_futex, SYS_getpid,
                    SYS_readlink, SYS_getdents64, SYS_pread64, SYS_lseek, SYS_statx, SYS_clock_nanosleep}) {
      BOOST_TEST(ConstAllow(p.instructions, static_cast<uint32_t>(nr)),
                 "syscall " << nr << (stub == StubAllowance::kShim ? " with" : " without") << " the shim");
    }
    // What may stop, or depends on its arguments, is no constant: the
    // kernel runs the program for it.
    for (long nr : {SYS_unlink, SYS_renameat2, SYS_openat, SYS_openat2, SYS_ftruncate, SYS_io_uring_setup}) {
      BOOST_TEST(!ConstAllow(p.instructions, static_cast<uint32_t>(nr)), "syscall " << nr);
    }
  }
}

// Exactly the table's numbers are no constant ALLOW: what it does not
// list runs at full speed, with or without the shim.
BOOST_AUTO_TEST_CASE(EveryNumberOutsideTheTableIsLeftToTheKernelsCache) {
  for (StubAllowance stub : {StubAllowance::kShim, StubAllowance::kNone}) {
    for (uint32_t nr = 0; nr < 1024; ++nr) {
      BOOST_TEST(ConstAllow(Filter(stub).instructions, nr) == (guard_syscall_find(nr) == nullptr),
                 "syscall " << nr << (stub == StubAllowance::kShim ? " with" : " without") << " the shim");
    }
  }
}

// The kernel runs the program for every call that may stop, the shim's
// included (each of its captured calls from the stub: an openat, a link,
// an fchmod), and for every open. libseccomp's default program tests the
// numbers one after the other (openat found after about 60 instructions);
// the filter asks for its binary tree (SCMP_FLTATR_CTL_OPTIMIZE 2), which
// finds any number's rules in a few comparisons. Counted without the shim's
// stub allowance, whose block (after the rules, the same for every call
// that would stop) is no part of the lookup. With libseccomp's chain this
// fails: 55 instructions and more.
BOOST_AUTO_TEST_CASE(EveryCallFindsItsRulesInAFewComparisons) {
  FilterProgram p;
  BOOST_REQUIRE(BuildCaptureFilter(&p, StubAllowance::kNone).ok());
  size_t most = 0;
  uint32_t worst = 0;
  for (uint32_t nr = 0; nr < 512; ++nr) {
    size_t steps = WalkKnown(p.instructions, nr).steps;
    if (steps > most) {
      most = steps;
      worst = nr;
    }
  }
  BOOST_TEST(most <= 24u, "syscall " << worst << " runs " << most << " instructions before its rules");
}

// Without the shim (--mode trace) the stub's address is no way past the
// filter: a program that maps code of its own there is stopped like any.
BOOST_AUTO_TEST_CASE(WithoutTheShimTheStubAddressRunsNothingUnstopped) {
  Paths p;
  uint64_t m = p.Missing(), m2 = p.Missing2();
  Check(
      {
          {"unlink from the stub's address", Abi::kStub, SYS_unlink, {m}, Action::kTrace, 0},
          {"openat O_RDWR|O_CREAT from the stub's address", Abi::kStub, SYS_openat,
           {kCwd, m, O_RDWR | O_CREAT, 0644}, Action::kTrace, 0},
          {"renameat2 from the stub's address", Abi::kStub, SYS_renameat2, {kCwd, m, kCwd, m2, 0}, Action::kTrace,
           0},
      },
      StubAllowance::kNone);
}

}  // namespace
}  // namespace guard
