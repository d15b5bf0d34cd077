// A store that is really full: GUARD_HOME is a 2 MiB tmpfs (in a private
// mount namespace of this test), the tree lives on another filesystem, so
// no pre-image can be captured by hard link and every one must be copied.
// A first session fills the store with the pre-image of a large random
// file; then a change whose pre-image cannot fit must
//   - with the default policy (block) fail in the command with ENOSPC (or
//     EIO), leave the file as it was, and make guard say once, in one line
//     on stderr, that it refused the change;
//   - with --on-capture-failure=allow happen, its journal record flagged
//     kNotCaptured;
// and sessions, show and status keep working on what was captured.
#define BOOST_TEST_MODULE durability_disk_full
#include <boost/test/unit_test.hpp>
#include <memory>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tmpfs_mount.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"
#include "tests/e2e/support/preload_blind.h"

namespace guard::e2e {
namespace {

constexpr uint64_t kStoreBytes = 2 << 20;

std::string RandomBytes(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng.Next();
    for (size_t j = 0; j < 8 && i + j < n; ++j) out[i + j] = static_cast<char>(v >> (8 * j));
  }
  return out;
}

// Mounting needs root and a private mount namespace; say clearly why not.
struct CanMount {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    std::string why;
    boost::test_tools::assertion_result r(CanMountTmpfs(&why));
    if (!r) r.message() << "skipped: " << why;
    return r;
  }
};

// A workspace whose GUARD_HOME is a small tmpfs, with the store already
// filled by one session's pre-image: what is left is less than the files
// the tests then change. Changing "victim*.bin" needs a copy of more than
// the free space; "small.txt" fits.
struct FullStore {
  Workspace ws;
  std::unique_ptr<TmpfsMount> mount;
  std::string filler_session;
  uint64_t free_after_fill = 0;

  FullStore() {
    mount = std::make_unique<TmpfsMount>(ws.home(), kStoreBytes);
    ws.Write("big.bin", RandomBytes(1536 * 1024, 1));
    GuardResult fill = RunGuardBash(ws, ": > big.bin");
    BOOST_REQUIRE_MESSAGE(fill.exit_code == 0, "filling the store: " << DescribeResult(fill));
    BOOST_REQUIRE_EQUAL(fill.new_sessions.size(), 1u);
    filler_session = fill.new_sessions[0];
    free_after_fill = mount->FreeBytes();
    BOOST_REQUIRE_MESSAGE(free_after_fill < 600 * 1024, "the store is not full: " << free_after_fill << " bytes free");
    size_t victim = free_after_fill + 256 * 1024;
    ws.Write("victim.bin", RandomBytes(victim, 2), 0640);
    ws.Write("victim2.bin", RandomBytes(victim, 3), 0600);
    ws.Write("victim3.bin", RandomBytes(victim, 4), 0644);
    ws.Write("small.txt", "small and easily saved\n");
  }
  ~FullStore() { mount.reset(); }  // before the workspace is removed
};

// A python3 program that makes each change and prints, for each, "ok" or
// the errno name: the command's own view of what guard did to its calls.
const char* kChanges = R"(
import errno, os
def attempt(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
def overwrite():
    fd = os.open("victim.bin", os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"new content\n")
    os.close(fd)
attempt("overwrite", overwrite)
attempt("delete", lambda: os.unlink("victim2.bin"))
attempt("rename-over", lambda: os.rename("small.txt", "victim3.bin"))
)";

GuardResult RunChanges(const Workspace& ws, const std::vector<std::string>& options) {
  GuardRun run;
  run.command = {"python3", "-c", kChanges};
  run.guard_options = options;
  run.env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";  // python3 itself, not a version manager's shim
  run.timeout_seconds = 60;
  return RunGuard(ws, run);
}

BOOST_AUTO_TEST_CASE(BlockPolicyRefusesChangesWhosePreImageCannotBeSaved, *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  const Workspace& ws = store.ws;
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = RunChanges(ws, {});
  BOOST_TEST_MESSAGE("block policy: the command printed:\n" << r.out << "guard printed:\n" << r.err);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  // Each call failed as a full disk makes it fail.
  for (const char* change : {"overwrite", "delete", "rename-over"}) {
    bool refused = Contains(r.out, std::string(change) + " ENOSPC") || Contains(r.out, std::string(change) + " EIO");
    BOOST_TEST(refused, change << " was not refused with ENOSPC or EIO:\n" << r.out);
  }
  BOOST_TEST(Contains(r.out, "overwrite ENOSPC"), "a full store should read as ENOSPC:\n" << r.out);
  // Nothing changed.
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "the tree changed:\n" << Printable(diff.empty() ? "" : diff[0]));
  // One line, the first time, naming the path and the refusal (--quiet:
  // nothing else of guard's).
  std::vector<std::string> lines = Lines(r.err);
  BOOST_TEST(lines.size() == 1u, "guard should print exactly one line:\n" << r.err);
  if (!lines.empty()) {
    BOOST_TEST(Contains(lines[0], "victim.bin"), lines[0]);
    BOOST_TEST(Contains(lines[0], "refused"), lines[0]);
  }

  // The session and the one before it can still be listed and shown.
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  ProcessResult sessions = RunGuardWithin(ws, {"sessions"}, 20);
  BOOST_TEST(sessions.exit_code == 0, DescribeResult(sessions));
  BOOST_TEST(Contains(sessions.out, store.filler_session), sessions.out);
  BOOST_TEST(Contains(sessions.out, r.new_sessions[0]), sessions.out);
  ProcessResult show = RunGuardWithin(ws, {"show", "--session", store.filler_session}, 20);
  BOOST_TEST(show.exit_code == 0, DescribeResult(show));
  BOOST_TEST(Contains(show.out, "big.bin"), show.out);
  ProcessResult show_refused = RunGuardWithin(ws, {"show", "--session", r.new_sessions[0]}, 20);
  BOOST_TEST(show_refused.exit_code == 0, DescribeResult(show_refused));
  ProcessResult status = RunGuardWithin(ws, {"status"}, 20);
  BOOST_TEST(status.exit_code < 128, DescribeResult(status));
  BOOST_TEST(!status.timed_out);
}

BOOST_AUTO_TEST_CASE(AllowPolicyLetsTheChangeHappenAndFlagsItNotCaptured,
                     *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  const Workspace& ws = store.ws;

  GuardResult r = RunChanges(ws, {"--on-capture-failure=allow"});
  BOOST_TEST_MESSAGE("allow policy: the command printed:\n" << r.out << "guard printed:\n" << r.err);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(Contains(r.out, "overwrite ok"), r.out);
  BOOST_TEST(Contains(r.out, "delete ok"), r.out);
  BOOST_TEST(Contains(r.out, "rename-over ok"), r.out);
  BOOST_TEST(ws.Read("victim.bin") == "new content\n");
  BOOST_TEST(!ws.Exists("victim2.bin"));
  BOOST_TEST(ws.Read("victim3.bin") == "small and easily saved\n");

  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  const std::string& id = r.new_sessions[0];
  SessionView s = SessionView::Load(ws.home(), id);
  BOOST_TEST(s.journal_problems().empty());
  const Record* overwrite = s.FindOp(OpKind::kModify, "victim.bin");
  const Record* del = s.FindOp(OpKind::kDelete, "victim2.bin");
  const Record* over = s.FindOp(OpKind::kRename, "small.txt");
  BOOST_REQUIRE_MESSAGE(overwrite && del && over, "missing records:\n" << s.Dump());
  for (const Record* rec : {overwrite, del, over}) {
    BOOST_TEST((rec->flags & kNotCaptured) != 0u, "record " << rec->seq << " of " << rec->path
                                                             << " lacks kNotCaptured (bit 1): flags " << rec->flags);
    BOOST_TEST((rec->flags & (1u << 1)) != 0u);
  }

  ProcessResult sessions = RunGuardWithin(ws, {"sessions", "--json"}, 20);
  BOOST_TEST(sessions.exit_code == 0, DescribeResult(sessions));
  BOOST_TEST(SessionStateOf(ws, id) == "finished");
  ProcessResult show = RunGuardWithin(ws, {"show", "--session", id}, 20);
  BOOST_TEST(show.exit_code == 0, DescribeResult(show));
  BOOST_TEST(Contains(show.out, "victim.bin"), show.out);
  BOOST_TEST(Contains(show.out, "pre-image not saved"), show.out);
  ProcessResult json = RunGuardWithin(ws, {"show", "--json", "--session", id}, 20);
  BOOST_TEST(json.exit_code == 0, DescribeResult(json));
  BOOST_TEST(Contains(json.out, "not_captured"), json.out);
  ProcessResult filler = RunGuardWithin(ws, {"show", "--session", store.filler_session}, 20);
  BOOST_TEST(filler.exit_code == 0, DescribeResult(filler));

  // An undo of that session restores what was captured (small.txt's move)
  // and names the paths whose pre-image was never saved.
  ProcessResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", id}, 30);
  BOOST_TEST_MESSAGE("undo of the allow session:\n" << DescribeResult(undo));
  BOOST_TEST(undo.exit_code == 1, DescribeResult(undo));
  BOOST_TEST(Contains(undo.err, "victim.bin"), undo.err);
  BOOST_TEST(Contains(undo.err, "victim2.bin"), undo.err);
  BOOST_TEST(Contains(undo.err, "victim3.bin"), undo.err);
  BOOST_TEST(ws.Read("small.txt") == "small and easily saved\n");
}

// With --on-capture-failure=allow, a change whose pre-image could not be
// saved is announced in one line on the terminal, with or without --quiet
// (docs/durability.md: "Either way you see one clear line").
BOOST_AUTO_TEST_CASE(AllowPolicySaysInOneLineThatAChangeWentUnrecorded,
                     *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  GuardResult r = RunChanges(store.ws, {"--on-capture-failure=allow"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  int naming = 0;
  for (const std::string& line : Lines(r.err)) naming += Contains(line, "victim.bin");
  BOOST_TEST(naming == 1, "guard should say once that victim.bin changed unrecorded:\n" << r.err);
}

// A directory renamed out of the root needs the content of every file below
// it saved (docs/capture.md): when that cannot be, the policy decides for
// the rename as it does for any other pre-image.
GuardResult MoveOut(const Workspace& ws, const std::vector<std::string>& options) {
  GuardRun run;
  run.command = {"python3", "-c",
                 "import errno, os, sys\n"
                 "try:\n"
                 "    os.rename('d', sys.argv[1])\n"
                 "    print('move ok')\n"
                 "except OSError as e:\n"
                 "    print('move', errno.errorcode.get(e.errno, str(e.errno)))\n",
                 ws.outside() + "/d"};
  run.guard_options = options;
  run.env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";
  run.timeout_seconds = 60;
  return RunGuard(ws, run);
}

BOOST_AUTO_TEST_CASE(BlockPolicyRefusesMovingOutADirectoryWhoseFilesCannotBeSaved, GUARD_PRELOAD_BLIND("a directory renamed out of the root") 
                     *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  const Workspace& ws = store.ws;
  ws.Mkdir("d");
  ws.Write("d/small.txt", "small\n");
  ws.Write("d/big.bin", RandomBytes(store.free_after_fill + 256 * 1024, 5));
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MoveOut(ws, {});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST((Contains(r.out, "move ENOSPC") || Contains(r.out, "move EIO")), r.out);
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
}

BOOST_AUTO_TEST_CASE(AllowPolicyMovesOutADirectoryAndFlagsTheFilesNotSaved, GUARD_PRELOAD_BLIND("a directory renamed out of the root") 
                     *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  const Workspace& ws = store.ws;
  ws.Mkdir("d");
  ws.Write("d/small.txt", "small\n");
  ws.Write("d/big.bin", RandomBytes(store.free_after_fill + 256 * 1024, 5));

  GuardResult r = MoveOut(ws, {"--on-capture-failure=allow"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(Contains(r.out, "move ok"), r.out);
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  SessionView s = SessionView::Load(ws.home(), r.new_sessions[0]);
  const Record* big = s.FindOp(OpKind::kDelete, "d/big.bin");
  const Record* small = s.FindOp(OpKind::kDelete, "d/small.txt");
  BOOST_REQUIRE_MESSAGE(big && small, "missing records:\n" << s.Dump());
  BOOST_TEST((big->flags & kCarried) != 0u);
  BOOST_TEST((big->flags & kNotCaptured) != 0u);
  BOOST_TEST((small->flags & kNotCaptured) == 0u);
}

BOOST_AUTO_TEST_CASE(GuardSealsAndListsSessionsWhenTheStoreIsFull, *boost::unit_test::precondition(CanMount())) {
  FullStore store;
  const Workspace& ws = store.ws;
  // Changes that need no pre-image (creations) still work and the session is
  // sealed normally, however full the store.
  GuardResult r = RunGuardBash(ws, "echo a > new1.txt; mkdir d; echo b > d/new2.txt");
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  BOOST_TEST(SessionStateOf(ws, r.new_sessions[0]) == "finished");
  BOOST_TEST(ws.Read("d/new2.txt") == "b\n");
}

}  // namespace
}  // namespace guard::e2e
