// Programs that no preload shim can see: a static binary issuing raw
// syscalls, busybox (static), processes started with a cleared environment,
// threads of one process writing at once, and children made by vfork and
// posix_spawn. The seccomp filter stops them all the same.
#define BOOST_TEST_MODULE raw_syscall_capture
#include <boost/test/unit_test.hpp>

#include <set>

#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kRename = OpKind::kRename,
                 kExchange = OpKind::kExchange, kDelete = OpKind::kDelete, kMkdir = OpKind::kMkdir,
                 kRmdir = OpKind::kRmdir, kSymlink = OpKind::kSymlink, kLink = OpKind::kLink,
                 kChmod = OpKind::kChmod, kMknod = OpKind::kMknod;

GuardResult MustRun(const Workspace& ws, GuardRun run) {
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stdout:\n" << r.out << "stderr:\n" << r.err);
  return r;
}

BOOST_AUTO_TEST_CASE(StaticBinaryRawSyscallsAreCapturedInOrder) {
  Workspace ws;
  ws.Mkdir("sub");
  ws.Write("sub/inner.txt", "inner before\n");
  ws.Write("sub/gone.txt", "deleted through a dirfd\n", 0600);
  ws.Write("sub/x", "x side of the exchange\n");
  ws.Write("over-src", "renamed over\n");
  ws.Write("over-dst", "replaced by a raw renameat2\n", 0640);
  ws.Write("y", "y side of the exchange\n", 0600);
  ws.Mkdir("emptydir", 0700);
  ws.Write("mode.txt", "mode\n", 0664);
  ws.Write("trunc.txt", "truncated to three bytes\n");
  ws.Write("rdwr.txt", "opened O_RDWR, then ftruncate\n");
  ws.Write("src", "hard-linked\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {TestProgram("static_raw_syscalls")};
  GuardResult r = MustRun(ws, run);

  SessionView s = ExpectCapture(ws, r, before,
                                {{kCreate, "new.txt"},
                                 {kModify, "sub/inner.txt"},
                                 {kCreate, "dotdot.txt"},
                                 {kRename, "over-src", "over-dst"},
                                 {kExchange, "sub/x", "y"},
                                 {kDelete, "sub/gone.txt"},
                                 {kMkdir, "sub/newdir"},
                                 {kRmdir, "emptydir"},
                                 {kChmod, "mode.txt"},
                                 {kModify, "trunc.txt"},
                                 {kModify, "rdwr.txt"},
                                 {kModify, "rdwr.txt"},
                                 {kChmod, "rdwr.txt"},
                                 {kLink, "src", "sub/hard"},
                                 {kSymlink, "sub/sym"},
                                 {kMknod, "fifo"},
                                 {kCreate, "via-openat2"},
                                 {kCreate, "legacy-open"},
                                 {kCreate, "legacy-creat"},
                                 {kRename, "legacy-creat", "legacy-renamed"},
                                 {kMkdir, "legacy-dir"},
                                 {kRmdir, "legacy-dir"},
                                 {kLink, "legacy-open", "legacy-link"},
                                 {kSymlink, "legacy-sym"},
                                 {kChmod, "legacy-open"},
                                 // legacy-link is the same file: its mode changed too
                                 {kChmod, "legacy-link"},
                                 {kDelete, "legacy-link"}});
  ExpectPreImagesOf(s, before, {"sub/inner.txt", "over-dst", "sub/gone.txt", "trunc.txt", "rdwr.txt"});
  // The refused RENAME_NOREPLACE could change nothing: it is not an operation.
  for (const Record* op : s.Operations()) BOOST_TEST((op->path != "new.txt" || op->kind == kCreate));
  // Calls through the 32-bit and x32 entry points failed (ENOSYS), unseen
  // by the x86_64 rules but stopped by the filter's architecture check.
  BOOST_TEST(!ws.Exists("via-int80"));
  BOOST_TEST(!ws.Exists("via-x32"));
  const Record* sym = s.FindOp(kSymlink, "sub/sym");
  BOOST_REQUIRE(sym != nullptr);
  BOOST_TEST(sym->target == "../src");
}

// open_by_handle_at(2) opens a file for writing (and O_TRUNC truncates it)
// from a handle instead of a path, so guard cannot know what it is about to
// change. The filter refuses it with EPERM when the flags ask for writing:
// the change is refused, never made unrecorded. (Root only: it needs
// CAP_DAC_READ_SEARCH.)
BOOST_AUTO_TEST_CASE(OpenByHandleForWritingIsRefusedNotLost) {
  Workspace ws;
  ws.Write("precious", "opened by handle and truncated\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {TestProgram("open_by_handle_writer"), "precious", "overwritten\n"};
  GuardResult r = RunGuard(ws, run);

  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("open_by_handle_at: Operation not permitted") != std::string::npos, r.err);
  BOOST_TEST(ws.Read("precious") == "opened by handle and truncated\n");
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
}

BOOST_AUTO_TEST_CASE(BusyboxStaticShellAndAppletsAreCaptured) {
  Workspace ws;
  ws.Write("del.txt", "busybox rm\n");
  ws.Write("from", "busybox mv\n");
  ws.Write("to", "replaced by busybox mv\n", 0600);
  ws.Write("edit.txt", "hello world\n", 0640);
  ws.Write("redir.txt", "busybox sh truncates this\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {"/bin/busybox", "sh", "-c",
                 "echo from-busybox > redir.txt && /bin/busybox rm del.txt && /bin/busybox mv from to && "
                 "/bin/busybox sed -i s/world/guard/ edit.txt"};
  GuardResult r = MustRun(ws, run);

  // busybox sed -i: a temporary file beside the original, fchmod, rename over.
  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "redir.txt"},
                                 {kDelete, "del.txt"},
                                 {kRename, "from", "to"},
                                 {kCreate, "edit.txt*"},
                                 {kChmod, "edit.txt*"},
                                 {kRename, "edit.txt*", "edit.txt"}});
  ExpectPreImagesOf(s, before, {"redir.txt", "del.txt", "to", "edit.txt"});
  BOOST_TEST(ws.Read("edit.txt") == "hello guard\n");
}

BOOST_AUTO_TEST_CASE(GuardStartedWithAClearedEnvironmentStillCaptures) {
  Workspace ws;
  ws.Write("a", "before env -i\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // guard itself with nothing but GUARD_HOME in its environment (no PATH,
  // no HOME), running a shell with absolute paths.
  GuardRun run;
  run.clear_env = true;
  run.command = {"/bin/bash", "-c", "echo changed > a && /bin/rm a && /bin/mkdir d"};
  GuardResult r = MustRun(ws, run);

  ExpectCapture(ws, r, before, {{kModify, "a"}, {kDelete, "a"}, {kMkdir, "d"}});
}

BOOST_AUTO_TEST_CASE(CommandThatClearsItsEnvironmentStillCaptures) {
  Workspace ws;
  ws.Write("a", "before env -i\n");
  ws.Write("b", "deleted by a child without GUARD_SESSION\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // `env -i` drops GUARD_SESSION and UV_USE_IO_URING from the child's
  // environment: the tracer follows it regardless.
  GuardRun run;
  run.command = {"env", "-i", "/bin/sh", "-c", "echo changed > a; /bin/rm b; /usr/bin/env > /dev/null"};
  GuardResult r = MustRun(ws, run);

  ExpectCapture(ws, r, before, {{kModify, "a"}, {kDelete, "b"}});
}

BOOST_AUTO_TEST_CASE(ThreadsWritingAtOnceAreEachCaptured) {
  constexpr int kThreads = 6, kRounds = 3;
  Workspace ws;
  std::vector<Op> expected;
  std::vector<std::string> originals;
  for (int i = 0; i < kThreads; ++i) {
    std::string t = "t" + std::to_string(i);
    ws.Write(t + ".txt", "original text of thread " + std::to_string(i) + "\n" + std::string(5000 * i, 'x'));
    ws.Write(t + ".out", "original output of thread " + std::to_string(i) + "\n", 0600);
    ws.Write(t + ".del", "deleted by thread " + std::to_string(i) + "\n");
    originals.insert(originals.end(), {t + ".txt", t + ".out", t + ".del"});
    for (int round = 0; round < kRounds; ++round) {
      expected.push_back({kModify, t + ".txt"});
      expected.push_back({kCreate, t + ".tmp"});
      expected.push_back({kRename, t + ".tmp", t + ".out"});
    }
    expected.push_back({kDelete, t + ".del"});
  }
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {TestProgram("threaded_writer"), std::to_string(kThreads), std::to_string(kRounds)};
  GuardResult r = MustRun(ws, run);

  // Threads interleave: the set must match, and each thread's own files in
  // the order that thread used them.
  SessionView s = ExpectCapture(ws, r, before, expected, /*ordered=*/false);
  ExpectPreImagesOf(s, before, originals);
  std::vector<Op> ops = s.OpList();
  for (int i = 0; i < kThreads; ++i) {
    std::string t = "t" + std::to_string(i);
    std::vector<Op> mine, want;
    for (const Op& op : ops) {
      if (op.path.compare(0, t.size() + 1, t + ".") == 0) mine.push_back(op);
    }
    for (const Op& op : expected) {
      if (op.path.compare(0, t.size() + 1, t + ".") == 0) want.push_back(op);
    }
    std::string mismatch = MatchOps(mine, want);
    BOOST_TEST(mismatch.empty(), "thread " << i << ": " << mismatch);
  }
  std::set<int32_t> tids;
  for (const Record* op : s.Operations()) tids.insert(op->pid);
  BOOST_TEST(tids.size() == static_cast<size_t>(kThreads), "operations came from " << tids.size() << " threads");
}

BOOST_AUTO_TEST_CASE(ChildrenStartedByPosixSpawnAndVforkAreCaptured) {
  Workspace ws;
  ws.Write("spawn-victim", "deleted by a posix_spawn child\n");
  ws.Write("vfork-victim", "truncated by a vfork child\n", 0600);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {"bash", "-c",
                 TestProgram("spawner") + " posix_spawn /bin/sh -c 'echo spawned > spawned; rm spawn-victim' && " +
                     TestProgram("spawner") + " vfork /bin/sh -c ': > vfork-victim; mkdir vforked'"};
  GuardResult r = MustRun(ws, run);

  ExpectCapture(ws, r, before,
                {{kCreate, "spawned"}, {kDelete, "spawn-victim"}, {kModify, "vfork-victim"}, {kMkdir, "vforked"}});
}

}  // namespace
}  // namespace guard::e2e
