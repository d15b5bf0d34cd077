// A file opened for writing without O_TRUNC is captured at its first change
// under --mode auto and --mode preload, not at the open (docs/shim.md, "The
// lazy capture and its fd marks"); the tracer stops no write. So every way a
// libc caller changes a file through an fd, or hands the fd on, must take
// the pre-image first: splice, a reflink, the two AIO interfaces, a shared
// mapping made by syscall(), the copies of an fd (F_DUPFD, syscall() dups,
// SCM_RIGHTS to this or another process), a posix_spawn's file actions, an
// exec by syscall(), and glibc's second names for write, pwrite64, dup2,
// fcntl and open.
// Each case writes into a file of the tree by one of them
// (tests/programs/fd_handoffs.c), then undoes the session (the tree before
// it, byte for byte), replays it and undoes it again. Before the shim took
// these, each left the changed file in place after undo under auto and
// preload; --mode trace captures at the open and passed all along.
#define BOOST_TEST_MODULE fd_handoff
#include <boost/test/unit_test.hpp>

#include <errno.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "tests/e2e/support/watch_blind.h"
#include "tests/e2e/support/session_mode.h"
#include "tests/e2e/support/undone_session.h"

namespace guard::e2e {
namespace {

constexpr const char* kOriginal = "the user's work, which must survive this\n";
constexpr const char* kText = "CHANGED";

void ChangeThenUndo(const std::string& how, bool truncates = false) {
  Workspace ws;
  ws.Write("notes", kOriginal, 0644);
  UndoneSession s(ws, {TestProgram("fd_handoffs"), how, "notes", kText});
  const std::string expected =
      truncates ? std::string(kText) : std::string(kText) + (kOriginal + std::string(kText).size());
  BOOST_TEST(ws.Read("notes") == expected, how << ": the change itself");
  s.ExpectUndoReplayUndo();
  BOOST_TEST(ws.Read("notes") == kOriginal, how);
}

BOOST_AUTO_TEST_CASE(SpliceIntoAFileOpenedForWritingIsUndone) {
  ChangeThenUndo("splice");
  ChangeThenUndo("syscall-splice");
}

BOOST_AUTO_TEST_CASE(PosixAioWriteIsUndone) {
  ChangeThenUndo("aio-write");
  ChangeThenUndo("lio-listio");
}

// The io_submit entry point is libaio's, which the shim stands in front of;
// without the shim (--mode trace, --mode watch) there is none.
BOOST_AUTO_TEST_CASE(LinuxAioWriteIsUndone) {
  ChangeThenUndo("io-submit");
  if (ShimCaptures() && !UnderWatch()) ChangeThenUndo("io-submit-entry");
}

BOOST_AUTO_TEST_CASE(ASharedMappingMadeBySyscallIsUndone) { ChangeThenUndo("mmap-syscall"); }

BOOST_AUTO_TEST_CASE(AWriteThroughACopyOfTheFdIsUndone) {
  for (const char* how : {"fcntl-dupfd", "fcntl-dupfd-cloexec", "syscall-dup", "syscall-dup3", "syscall-fcntl"}) {
    ChangeThenUndo(how);
  }
}

BOOST_AUTO_TEST_CASE(AWriteThroughAnFdSentOverAUnixSocketIsUndone) {
  for (const char* how : {"scm-self", "scm-child", "scm-sendmmsg"}) ChangeThenUndo(how);
}

BOOST_AUTO_TEST_CASE(AWriteByAProgramSpawnedWithTheFdAsItsStdoutIsUndone) { ChangeThenUndo("spawn-dup2"); }

// A spawn's open action is made in the child by glibc's internal open: the
// tracer's under auto; under preload, with nothing to catch it, the action
// is a miss, refused under "block" (an action opening /dev/null is not).
BOOST_AUTO_TEST_CASE(ASpawnsOpenActionIsUndoneOrUnderPreloadRefused) {
  const char* mode = getenv("GUARD_MODE");
  if (mode == nullptr || std::string(mode) != "preload") {
    ChangeThenUndo("spawn-open", true);
    return;
  }
  Workspace ws;
  ws.Write("notes", kOriginal, 0644);
  UndoneSession s(ws, {TestProgram("fd_handoffs"), "spawn-open", "notes", kText});
  BOOST_TEST(s.run().out == "refused " + std::to_string(EPERM) + "\n", s.run().out);
  BOOST_TEST(s.run().err.find("cannot capture this posix_spawn_file_actions_addopen; refused") != std::string::npos,
             s.run().err);
  BOOST_TEST(ws.Read("notes") == kOriginal);
  s.ExpectUndoReplayUndo();
}

// A vfork child execs its own copy of the fd table while it reads its
// parent's marks: what they call pending reaches the new image (dash's and
// Python's subprocess children are vfork children).
BOOST_AUTO_TEST_CASE(AWriteByAProgramAVforkChildExecutedThroughAnInheritedFdIsUndone) {
  ChangeThenUndo("vfork-exec");
  Workspace ws;
  ws.Write("notes", kOriginal, 0644);
  UndoneSession dash(ws, {"dash", "-c", "exec 3>>notes; dash -c 'echo from-grandchild >&3'"});
  BOOST_TEST(ws.Read("notes") == std::string(kOriginal) + "from-grandchild\n");
  dash.ExpectUndoReplayUndo();
  UndoneSession python(ws, {"python3", "-c",
                            "import os, subprocess\n"
                            "fd = os.open('notes', os.O_WRONLY | os.O_APPEND)\n"
                            "subprocess.run(['sh', '-c', f'echo passed >&{fd}'], pass_fds=[fd], check=True)\n"});
  python.ExpectUndoReplayUndo();
}

// A thread with an fd table of its own (unshare(CLONE_FILES)): its fd
// numbers name other files in the process's table (/proc/self/fd), so the
// shim names them by /proc/thread-self/fd.
BOOST_AUTO_TEST_CASE(AThreadWithItsOwnFdTableHasItsChangesRecordedUnderTheirNames) {
  Workspace ws;
  ws.Mkdir("sub");
  ws.Write("sub/notes", kOriginal, 0644);
  UndoneSession s(ws, {TestProgram("fd_handoffs"), "thread-own-fds", ws.Path("sub/notes"), kText});
  BOOST_TEST(ws.Read("sub/notes") == kText);
  BOOST_TEST(s.View().FindOp(OpKind::kModify, "sub/notes") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(AWriteByAProgramExecutedBySyscallThroughAnInheritedFdIsUndone) {
  ChangeThenUndo("syscall-execve");
}

// glibc exports write, pwrite64, dup2, fcntl and open under a second public
// name too (GLIBC_2.2.5): the same functions, which a program may call by
// it. (An __open the shim missed would still be the tracer's under auto.)
BOOST_AUTO_TEST_CASE(GlibcsOtherNamesForWriteDupFcntlAndOpenAreUndone) {
  for (const char* how : {"__write", "__pwrite64", "__dup2", "__fcntl"}) ChangeThenUndo(how);
  ChangeThenUndo("__open", true);
}

}  // namespace
}  // namespace guard::e2e
