// The preload shim (interpose/) inside real programs, without guard: each
// small program of tests/programs/shim_*.c runs with LD_PRELOAD of the shim
// and GUARD_SHIM_TEST_FD=2, so that the shim writes one line per call it
// classifies to stderr (interpose/test_report.h):
//   guard-shim <pid> <entry> <class> <path or fd=N>
// The programs check what they can see themselves (errno, file contents)
// and exit non-zero if it is wrong; the test checks the lines.
#define BOOST_TEST_MODULE shim_preload
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

struct Line {
  std::string pid, entry, cls, arg;
};

struct ShimRun {
  ProcessResult result;
  std::vector<Line> lines;
  std::string other_stderr;

  // The lines for `entry` (optionally only those naming `arg`).
  std::vector<Line> Of(const std::string& entry, const std::string& arg = "") const {
    std::vector<Line> out;
    for (const Line& l : lines) {
      if (l.entry == entry && (arg.empty() || l.arg == arg)) out.push_back(l);
    }
    return out;
  }
  std::set<std::string> Pids() const {
    std::set<std::string> pids;
    for (const Line& l : lines) pids.insert(l.pid);
    return pids;
  }
};

ShimRun RunWithShim(const Workspace& ws, std::vector<std::string> argv,
                    std::map<std::string, std::optional<std::string>> env = {}) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = ws.tree();
  spec.env = std::move(env);
  spec.env["LD_PRELOAD"] = GUARD_SHIM_LIBRARY;
  spec.env["GUARD_SHIM_TEST_FD"] = "2";
  // In a GUARD_SANITIZE build the programs carry ASan, which wants to be
  // the first library loaded; the shim (built without it) goes first.
  spec.env["ASAN_OPTIONS"] = "verify_asan_link_order=0";
  ShimRun run;
  run.result = RunProcess(spec);
  std::istringstream in(run.result.err);
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream words(text);
    std::string tag;
    Line l;
    if (words >> tag && tag == "guard-shim" && words >> l.pid >> l.entry >> l.cls) {
      std::getline(words >> std::ws, l.arg);
      run.lines.push_back(l);
    } else {
      run.other_stderr += text + "\n";
    }
  }
  BOOST_TEST_MESSAGE("stderr:\n" << run.result.err);
  return run;
}

void RequireExitZero(const ShimRun& run) {
  BOOST_REQUIRE_MESSAGE(run.result.exit_code == 0,
                        "exit " << run.result.exit_code << "; stderr:\n" << run.result.err);
}

// The class of the one line for entry (and arg), or a message if not one.
std::string ClassOf(const ShimRun& run, const std::string& entry, const std::string& arg = "") {
  std::vector<Line> ls = run.Of(entry, arg);
  if (ls.size() != 1) return "(" + std::to_string(ls.size()) + " lines for " + entry + " " + arg + ")";
  return ls[0].cls;
}

BOOST_AUTO_TEST_CASE(EveryInterposedEntryPointIsSeenAndClassified) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_entry_points")});
  RequireExitZero(run);
  // Pathname calls, each once, with the class its arguments give.
  const std::vector<std::pair<std::string, std::string>> once = {
      {"openat64", "create"},
      {"__open_2", "nothing"},
      {"__open64_2", "capture-at-first-write"},
      {"__openat_2", "capture-at-open"},
      {"__openat64_2", "nothing"},
      // A stream's writes are glibc's own (unseen): captured at the open.
      {"fopen", "capture-at-open"},
      {"fopen64", "create-or-capture-at-open"},
      {"freopen", "create-or-capture-at-open"},
      {"freopen64", "nothing"},
      {"mkstemp", "create"},
      {"mkstemp64", "create"},
      {"mkostemp", "create"},
      {"mkostemp64", "create"},
      {"mkstemps", "create"},
      {"mkstemps64", "create"},
      {"mkostemps", "create"},
      {"mkostemps64", "create"},
      {"mkdtemp", "mkdir"},
      {"rename", "rename"},
      {"renameat", "rename"},
      {"renameat2", "exchange"},
      {"unlink", "delete"},
      {"unlinkat", "delete"},
      {"remove", "delete"},
      {"mkdir", "mkdir"},
      {"rmdir", "rmdir"},
      {"mkdirat", "mkdir"},
      {"link", "link"},
      {"linkat", "link"},
      {"symlink", "symlink"},
      {"symlinkat", "symlink"},
      {"mknod", "mknod"},
      {"mknodat", "mknod"},
      {"mkfifo", "mknod"},
      {"mkfifoat", "mknod"},
      {"truncate", "truncate"},
      {"truncate64", "truncate"},
      {"chmod", "metadata"},
      {"lchmod", "metadata"},
      {"fchmodat", "metadata"},
      {"chown", "metadata"},
      {"lchown", "metadata"},
      {"fchownat", "metadata"},
      {"setxattr", "nothing"},
      {"lsetxattr", "metadata"},
      {"fchmod", "metadata"},
      {"fchown", "metadata"},
      {"fsetxattr", "metadata"},
      {"write", "first-change-capture"},
  };
  for (const auto& [entry, cls] : once) BOOST_TEST(ClassOf(run, entry) == cls, entry);
  BOOST_TEST(ClassOf(run, "open", "created") == "nothing");
  BOOST_TEST(ClassOf(run, "open64") == "capture-at-first-write");
  BOOST_TEST(ClassOf(run, "openat") == "capture-at-open");
  BOOST_TEST(ClassOf(run, "creat") == "create-or-capture-at-open");
  BOOST_TEST(ClassOf(run, "creat64") == "create-or-capture-at-open");
  // Each lazy entry point captured a freshly opened O_RDWR fd at its call:
  // its first change. The pwrite after the write above had nothing pending
  // (silent), so pwrite's one line is the loop's.
  for (const char* entry : {"pwrite", "pwrite64", "writev", "pwritev", "pwritev64", "pwritev2", "pwritev64v2",
                            "mmap", "mmap64", "ftruncate", "ftruncate64", "fallocate", "fallocate64",
                            "posix_fallocate", "posix_fallocate64", "copy_file_range", "sendfile", "sendfile64",
                            "dup", "dup2", "dup3", "fdopen", "dprintf", "vdprintf", "__dprintf_chk",
                            "__vdprintf_chk", "splice", "ioctl", "fcntl", "fcntl64", "sendmsg", "sendmmsg",
                            "aio_write", "aio_write64", "lio_listio", "lio_listio64", "io_submit"}) {
    BOOST_TEST(ClassOf(run, entry) == "first-change-capture", entry);
  }
  // syscall(): the program's own file making (an O_TRUNC openat, whose
  // write has nothing pending and is silent), the lazy write, then the
  // numbers the filter stops; getpid is not a change and gets no line.
  std::vector<std::string> via_syscall;
  for (const Line& l : run.Of("syscall")) {
    via_syscall.push_back(l.cls + " " + (l.arg.rfind("fd=", 0) == 0 ? "fd" : l.arg));
  }
  std::vector<std::string> expected = {
      "create-or-capture-at-open f", "create-or-capture-at-open r1", "create-or-capture-at-open u",
      "create-or-capture-at-open u", "first-change-capture fd", "create-or-capture-at-open sc",
      "capture-at-open sc", "create sc-new", "rename sc-renamed", "delete sc-renamed", "mkdir sc-dir",
      "rmdir sc-dir", "metadata sc"};
  BOOST_TEST(via_syscall == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ErrnoIsKeptByPassingCallsAndSetByFailingOnes) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_errno")});
  RequireExitZero(run);
  BOOST_TEST(ClassOf(run, "write") == "first-change-capture");
  BOOST_TEST(run.Of("unlink").size() == 2);
}

BOOST_AUTO_TEST_CASE(VforkChildThatOpensAndExecsLeavesTheParentsStateAlone) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_vfork_exec")});
  RequireExitZero(run);
  std::vector<Line> mine = run.Of("open", "mine"), theirs = run.Of("open", "theirs");
  BOOST_REQUIRE(mine.size() == 1);
  BOOST_REQUIRE(theirs.size() == 1);
  BOOST_TEST(mine[0].cls == "create-or-capture-at-first-write");
  // The child borrows the parent's marks: it captured at the open.
  BOOST_TEST(theirs[0].pid != mine[0].pid);
  BOOST_TEST(theirs[0].cls == "create-or-capture-at-open");
  // The child's exec was seen; its write through its own fd 3 was not a
  // pending change of the parent's (and left the parent's mark in place).
  // At the exec the child captured the fd number the parent's marks call
  // pending (a vfork child execs its own copy of the table, whose pending
  // fds reach the new image; here the number is the child's "theirs", so
  // captured for nothing) without taking the mark.
  std::vector<Line> execs = run.Of("execve");
  BOOST_REQUIRE(execs.size() == 2);
  BOOST_TEST(execs[0].cls == "first-change-capture");
  BOOST_TEST(execs[0].pid == theirs[0].pid);
  BOOST_TEST(execs[1].cls == "exec");
  std::vector<Line> writes = run.Of("write");
  BOOST_REQUIRE(writes.size() == 2);
  BOOST_TEST(writes[0].pid == theirs[0].pid);
  BOOST_TEST(writes[1].pid == mine[0].pid);
  BOOST_TEST(writes[1].cls == "first-change-capture");
  // The parent's guard was not left held by the child's exec.
  BOOST_TEST(ClassOf(run, "unlink", "mine") == "delete");
}

BOOST_AUTO_TEST_CASE(SignalHandlerWritingInsideAnInterposedCallGoesToTheRealFunctions) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_signal_write")}, {{"GUARD_SHIM_TEST_RAISE", "10"}});
  RequireExitZero(run);
  BOOST_TEST(ws.Read("from-handler-inside") == "written by the handler\n");
  BOOST_TEST(ws.Read("from-handler-outside") == "written by the handler\n");
  BOOST_TEST(!ws.Exists("victim"));
  // Inside the shim's own work the handler's calls are not the shim's (the
  // tracer sees them); outside it they are classified as any others.
  BOOST_TEST(run.Of("open", "from-handler-inside").empty());
  BOOST_TEST(ClassOf(run, "open", "from-handler-outside") == "create-or-capture-at-open");
  BOOST_TEST(ClassOf(run, "open", "victim") == "create");
  BOOST_TEST(ClassOf(run, "unlink", "victim") == "delete");
}

BOOST_AUTO_TEST_CASE(ForkChildOwnsItsMarksAndCapturesWhatItInherited) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_fork_child")});
  RequireExitZero(run);
  std::vector<Line> parent = run.Of("open", "inherited"), child = run.Of("open", "child-file");
  BOOST_REQUIRE(parent.size() == 1);
  BOOST_REQUIRE(child.size() == 1);
  BOOST_TEST(child[0].pid != parent[0].pid);
  BOOST_TEST(child[0].cls == "create-or-capture-at-first-write");
  std::vector<Line> writes = run.Of("write");
  BOOST_REQUIRE(writes.size() == 2);
  for (const Line& w : writes) {
    BOOST_TEST(w.pid == child[0].pid);
    BOOST_TEST(w.cls == "first-change-capture");
  }
  BOOST_TEST(ClassOf(run, "rename", "child-renamed") == "rename");
}

BOOST_AUTO_TEST_CASE(ProgramThatClearsItsEnvironmentStillLoadsTheShimAfterExec) {
  for (const char* how : {"execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
                          "posix_spawn", "posix_spawnp", "system", "popen"}) {
    BOOST_TEST_CONTEXT(how) {
      Workspace ws;
      ShimRun run = RunWithShim(ws, {TestProgram("shim_env_exec"), how});
      BOOST_TEST(run.result.exit_code == 0, "exit " << run.result.exit_code << "; stderr:\n" << run.result.err);
      BOOST_TEST(run.Of(how).size() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(LibraryLoadedByDlopenAfterStartIsSeen) {
  Workspace ws;
  ShimRun run = RunWithShim(ws, {TestProgram("shim_dlopen"), GUARD_SHIM_DL_WRITER});
  RequireExitZero(run);
  BOOST_TEST(ClassOf(run, "open", "dl-written") == "create-or-capture-at-open");
  BOOST_TEST(ClassOf(run, "rename", "dl-renamed") == "rename");
  BOOST_TEST(ClassOf(run, "unlink", "dl-renamed") == "delete");
  BOOST_TEST(!ws.Exists("dl-renamed"));
}

}  // namespace
}  // namespace guard::e2e
