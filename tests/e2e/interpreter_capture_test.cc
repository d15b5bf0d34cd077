// python3 and node changing files the way agents and their tools do:
// in-place rewrites, atomic replace by rename, deletes, and node's
// asynchronous fs API, which runs on libuv's thread pool (and would use
// io_uring, past the filter, if guard let it).
#define BOOST_TEST_MODULE interpreter_capture
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/preload_blind.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kRename = OpKind::kRename,
                 kDelete = OpKind::kDelete;

GuardResult MustRun(const Workspace& ws, const std::vector<std::string>& command,
                    std::map<std::string, std::optional<std::string>> env = {}) {
  GuardRun run;
  run.command = command;
  run.env = std::move(env);
  // No .pyc written next to the standard library (outside the root).
  run.env["PYTHONDONTWRITEBYTECODE"] = "1";
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stdout:\n" << r.out << "stderr:\n" << r.err);
  return r;
}

BOOST_AUTO_TEST_CASE(PythonWriteRenameUnlinkAndReplaceAreCaptured) {
  Workspace ws;
  ws.Write("written.txt", "python overwrites this\n", 0640);
  ws.Write("replaced.txt", "os.replace puts a new file here\n");
  ws.Write("renamed-over", "os.rename replaces this\n", 0600);
  ws.Write("unlinked.txt", std::string(200000, 'u'));
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, {"/usr/bin/python3", "-c", R"(
import os
with open("written.txt", "w") as f:
    f.write("new content\n")
with open("created.txt", "x") as f:
    f.write("created\n")
os.rename("created.txt", "renamed-over")
with open("replaced.txt.tmp", "w") as f:
    f.write("replacement\n")
os.replace("replaced.txt.tmp", "replaced.txt")
os.unlink("unlinked.txt")
)"});

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "written.txt"},
                                 {kCreate, "created.txt"},
                                 {kRename, "created.txt", "renamed-over"},
                                 {kCreate, "replaced.txt.tmp"},
                                 {kRename, "replaced.txt.tmp", "replaced.txt"},
                                 {kDelete, "unlinked.txt"}});
  ExpectPreImagesOf(s, before, {"written.txt", "replaced.txt", "renamed-over", "unlinked.txt"});
}

BOOST_AUTO_TEST_CASE(NodeSyncFsCallsAreCaptured) {
  Workspace ws;
  ws.Write("sync.txt", "node writeFileSync replaces this\n");
  ws.Write("rename-src", "moved by renameSync\n");
  ws.Write("rename-dst", "renamed over by renameSync\n", 0640);
  ws.Write("unlink.txt", "deleted by unlinkSync\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, {"node", "-e", R"(
const fs = require('fs');
fs.writeFileSync('sync.txt', 'written by node\n');
fs.writeFileSync('new.txt', 'new file\n');
fs.renameSync('rename-src', 'rename-dst');
fs.unlinkSync('unlink.txt');
)"});

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "sync.txt"},
                                 {kCreate, "new.txt"},
                                 {kRename, "rename-src", "rename-dst"},
                                 {kDelete, "unlink.txt"}});
  ExpectPreImagesOf(s, before, {"sync.txt", "rename-dst", "unlink.txt"});
}

// The async calls run on libuv's worker threads: each must be traced.
constexpr const char* kNodeAsyncScript = R"(
const fs = require('fs');
(async () => {
  await fs.promises.writeFile('async.txt', 'written by fs.promises\n');
  await fs.promises.writeFile('async-new.txt', 'created by fs.promises\n');
  await fs.promises.rename('async-new.txt', 'async-dst');
  await fs.promises.unlink('async-del');
  console.log('UV_USE_IO_URING=' + process.env.UV_USE_IO_URING);
})().catch((e) => { console.error(e); process.exit(1); });
)";

void ExpectNodeAsyncCaptured(const std::map<std::string, std::optional<std::string>>& env) {
  Workspace ws;
  ws.Write("async.txt", "fs.promises.writeFile replaces this\n");
  ws.Write("async-dst", "renamed over by fs.promises.rename\n");
  ws.Write("async-del", "deleted by fs.promises.unlink\n", 0600);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, {"node", "-e", kNodeAsyncScript}, env);

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "async.txt"},
                                 {kCreate, "async-new.txt"},
                                 {kRename, "async-new.txt", "async-dst"},
                                 {kDelete, "async-del"}});
  ExpectPreImagesOf(s, before, {"async.txt", "async-dst", "async-del"});
  // guard overrides the variable for the command.
  BOOST_TEST(r.out == "UV_USE_IO_URING=0\n");
}

BOOST_AUTO_TEST_CASE(NodeAsyncFsPromisesAreCaptured) { ExpectNodeAsyncCaptured({}); }

BOOST_AUTO_TEST_CASE(NodeAsyncFsIsCapturedEvenWhenIoUringIsAskedFor) {
  // Asked for by the user's environment: guard forces UV_USE_IO_URING=0, and
  // the filter makes io_uring_setup fail should libuv try it anyway.
  ExpectNodeAsyncCaptured({{"UV_USE_IO_URING", "1"}});
}

BOOST_AUTO_TEST_CASE(IoUringSetupFailsWithEnosysUnderGuard, GUARD_PRELOAD_BLIND("io_uring: no filter refuses it")) {
  // Whatever a program does with its environment, io_uring is unavailable:
  // a ring would carry writes past the filter.
  Workspace ws;
  GuardResult r = MustRun(ws, {"/usr/bin/python3", "-c", R"(
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
rc = libc.syscall(425, 4, params)  # io_uring_setup(4, &params)
print(rc, ctypes.get_errno() == errno.ENOSYS)
)"});
  BOOST_TEST(r.out == "-1 True\n");
}

}  // namespace
}  // namespace guard::e2e
