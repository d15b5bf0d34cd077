// Paths that reach the tree by another way than its own name (issue 11,
// items 3, 4 and 5): a bind mount of the root made before the session, one
// made inside it in a mount namespace of its own (as root and as an
// ordinary user in a user namespace), and `..` at the root of a chroot. A
// change made that way is a change to the tree: recorded under its name in
// the tree, and undone.
#define BOOST_TEST_MODULE alternate_paths
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <functional>

#include "tests/e2e/support/bind_mount.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/test_user.h"
#include "tests/e2e/support/tmpfs_mount.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kDelete = OpKind::kDelete,
                 kMkdir = OpKind::kMkdir, kChmod = OpKind::kChmod;

ProcessResult Run(const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  return RunProcess(spec);
}

// Whether user namespaces can be made here (`unshare -r true`).
bool CanUnshareUser(std::string* why) {
  ProcessResult r = Run({"unshare", "-r", "true"});
  if (r.exit_code == 0) return true;
  *why = "cannot make a user namespace (unshare -r true: " + r.err + ")";
  return false;
}

#define SKIP_UNLESS(cond, why)                                          \
  do {                                                                  \
    if (!(cond)) {                                                      \
      BOOST_TEST_MESSAGE("SKIPPED: " << (why));                         \
      BOOST_WARN_MESSAGE(false, "skipped: " << (why));                  \
      return;                                                           \
    }                                                                   \
  } while (0)

// What the changes of `Changes` leave: existing rewritten, f created, gone
// removed, d made, existing's mode changed.
void SetUpTree(const Workspace& ws) {
  ws.Write("existing", "old content\n", 0644);
  ws.Write("gone", "removed in the session\n", 0640);
}
std::string Changes(const std::string& at) {
  std::string q = ShellQuote(at);
  return "echo new > " + q + "/existing && echo x > " + q + "/f && rm " + q + "/gone && mkdir " + q +
         "/d && chmod 600 " + q + "/existing";
}
const std::vector<Op> kChangesOps = {
    {kModify, "existing"}, {kCreate, "f"}, {kDelete, "gone"}, {kMkdir, "d"}, {kChmod, "existing"}};

// The session recorded exactly the changes, under their names in the tree,
// and undo brings the tree back to `before`.
void ExpectRecordedAndUndone(const Workspace& ws, const GuardResult& r, const TreeSnapshot& before,
                             const std::vector<Op>& ops = kChangesOps) {
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  SessionView v = SessionView::Load(ws.home(), r.new_sessions[0]);
  // Names outside the tree are recorded by name too, and `mount` makes its
  // lock directory /run/mount the first time it runs after a boot: only
  // the tree's own are compared.
  std::vector<Op> recorded;
  for (const Op& op : v.OpList()) {
    if (op.path.empty() || op.path[0] != '/') recorded.push_back(op);
  }
  std::string mismatch = MatchOps(recorded, ops);
  BOOST_TEST(mismatch.empty(), mismatch << "\n" << v.Dump());
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::string text;
  for (const std::string& d : DiffSnapshots(before, SnapshotTree(ws.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "the tree differs (expected, found):\n" << text << DescribeResult(undo));
}

// ---------------------------------------------------------------------------
// Item 5: `..` at the root of a chroot stays at that root, as in the kernel.

BOOST_AUTO_TEST_CASE(DotDotAtTheRootOfAChrootStaysInsideTheJail) {
  std::string why;
  SKIP_UNLESS(CanUnshareUser(&why), why);
  SKIP_UNLESS(access("/usr/bin/busybox", X_OK) == 0, "no /usr/bin/busybox to run as the jail's shell");
  Workspace ws;
  ws.Mkdir("jail");
  ws.Mkdir("jail/bin");
  ws.Write("jail/bin/sh", ReadFile("/usr/bin/busybox"), 0755);
  ws.Write("jail/f", "old\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuardBash(ws, "unshare -r chroot jail /bin/sh -c 'echo X > /../../f; cd /; echo Y > ../../g'");
  BOOST_REQUIRE_EQUAL(ws.Read("jail/f"), "X\n");
  BOOST_REQUIRE(ws.Exists("jail/g"));
  ExpectRecordedAndUndone(ws, r, before, {{kModify, "jail/f"}, {kCreate, "jail/g"}});
}

// ---------------------------------------------------------------------------
// Item 4: the root reachable through a second path made before the session.

BOOST_AUTO_TEST_CASE(WritesThroughABindMountOfTheRootMadeBeforeTheSessionAreUndone) {
  std::string why;
  SKIP_UNLESS(CanMountTmpfs(&why), why);
  Workspace ws;
  SetUpTree(ws);
  std::string alias = ws.outside() + "/alias";
  MakeDir(alias);
  BindMount bind(ws.tree(), alias);
  TreeSnapshot before = SnapshotTree(ws.tree());
  ExpectRecordedAndUndone(ws, RunGuardBash(ws, Changes(alias)), before);
}

BOOST_AUTO_TEST_CASE(WritesThroughABindMountOfADirectoryAboveTheRootAreUndone) {
  std::string why;
  SKIP_UNLESS(CanMountTmpfs(&why), why);
  Workspace ws;
  SetUpTree(ws);
  std::string alias = ws.outside() + "/above";
  MakeDir(alias);
  BindMount bind(ws.dir(), alias);
  TreeSnapshot before = SnapshotTree(ws.tree());
  ExpectRecordedAndUndone(ws, RunGuardBash(ws, Changes(alias + "/tree")), before);
}

BOOST_AUTO_TEST_CASE(TheStateDirectoryCannotBeChangedThroughABindMountOfIt) {
  std::string why;
  SKIP_UNLESS(CanMountTmpfs(&why), why);
  Workspace ws;
  ws.Write("f", "x\n");
  GuardResult first = RunGuardBash(ws, "echo y > f");
  BOOST_REQUIRE_EQUAL(first.new_sessions.size(), 1u);
  std::string alias = ws.outside() + "/state";
  MakeDir(alias);
  BindMount bind(ws.home(), alias);
  GuardResult r = RunGuardBash(ws, "rm -rf " + ShellQuote(alias) + "/* 2>&1; true");
  BOOST_TEST(r.out.find("Permission denied") != std::string::npos, DescribeResult(r));
  // The first session is still whole: undo puts f back.
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", first.new_sessions[0]});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("f") == "x\n");
}

// ---------------------------------------------------------------------------
// Item 3: a bind mount made inside the session, in a mount namespace guard
// is not in.

BOOST_AUTO_TEST_CASE(WritesThroughABindMountMadeInsideTheSessionAreUndone) {
  std::string why;
  SKIP_UNLESS(geteuid() == 0, "unshare -m needs root (the user case below runs unprivileged)");
  Workspace ws;
  SetUpTree(ws);
  std::string alias = ws.outside() + "/alias";
  MakeDir(alias);
  TreeSnapshot before = SnapshotTree(ws.tree());
  std::string script = "mount --bind " + ShellQuote(ws.tree()) + " " + ShellQuote(alias) + " && " + Changes(alias);
  ExpectRecordedAndUndone(ws, RunGuardBash(ws, "unshare -m sh -c " + ShellQuote(script)), before);
}

// ---------------------------------------------------------------------------
// guard keeps each thread's view (root, mount namespace) from one call to
// the next (supervisor/trace/tracee_views.h). A thread it has seen already
// that changes its view must have its next call resolved in the new one.

std::string ViewChange() { return ShellQuote(TestProgram("view_change")); }

BOOST_AUTO_TEST_CASE(AThreadThatUnsharesItsMountsAfterAnEarlierCallIsResolvedInItsNewMounts) {
  SKIP_UNLESS(geteuid() == 0, "unshare(CLONE_NEWNS) needs root");
  Workspace ws;
  ws.Write("warmup", "removed before the unshare\n");
  ws.Write("existing", "old content\n");
  std::string alias = ws.outside() + "/alias";
  MakeDir(alias);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuardBash(ws, ViewChange() + " unshare-bind " + ShellQuote(ws.tree() + "/warmup") + " " +
                                       ShellQuote(ws.tree()) + " " + ShellQuote(alias) + " existing");
  BOOST_REQUIRE_EQUAL(ws.Read("existing"), "changed\n");
  ExpectRecordedAndUndone(ws, r, before, {{kDelete, "warmup"}, {kModify, "existing"}});
}

BOOST_AUTO_TEST_CASE(AThreadThatChrootsAfterAnEarlierCallIsResolvedInItsJail) {
  SKIP_UNLESS(geteuid() == 0, "chroot needs root");
  Workspace ws;
  ws.Write("warmup", "removed before the chroot\n");
  ws.Mkdir("jail");
  ws.Write("jail/f", "old\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = RunGuardBash(ws, ViewChange() + " chroot " + ShellQuote(ws.tree() + "/warmup") + " " +
                                       ShellQuote(ws.tree() + "/jail") + " f");
  BOOST_REQUIRE_EQUAL(ws.Read("jail/f"), "changed\n");
  ExpectRecordedAndUndone(ws, r, before, {{kDelete, "warmup"}, {kModify, "jail/f"}});
}

BOOST_AUTO_TEST_CASE(WritesThroughABindMountAnOrdinaryUserMadeInAUserNamespaceAreUndone) {
  std::string why;
  uid_t uid = 0;
  gid_t gid = 0;
  SKIP_UNLESS(CanUnshareUser(&why), why);
  SKIP_UNLESS(TestUser(&uid, &gid, &why), why);
  Workspace ws;
  SetUpTree(ws);
  std::string alias = ws.outside() + "/alias";
  MakeDir(alias);
  ProcessResult own = Run({"chown", "-R", std::to_string(uid) + ":" + std::to_string(gid), ws.dir()});
  BOOST_REQUIRE_MESSAGE(own.exit_code == 0, DescribeResult(own));
  TreeSnapshot before = SnapshotTree(ws.tree());
  std::string script = "mount --bind " + ShellQuote(ws.tree()) + " " + ShellQuote(alias) + " && " + Changes(alias);
  auto as_user = [&](std::vector<std::string> argv) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.cwd = ws.tree();
    spec.env = GuardEnv(ws);
    return RunProcess(AsUser(spec, uid, gid));
  };
  ProcessResult run = as_user({GuardBinary(), "--quiet", "--root", ws.tree(), "--", "unshare", "-rm", "sh", "-c",
                               script});
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, DescribeResult(run));
  BOOST_REQUIRE_EQUAL(ws.Read("existing"), "new\n");
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  SessionView v = SessionView::Load(ws.home(), ids[0]);
  std::string mismatch = MatchOps(v.OpList(), kChangesOps);
  BOOST_TEST(mismatch.empty(), mismatch << "\n" << v.Dump());
  ProcessResult undo = as_user({GuardBinary(), "undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::string text;
  for (const std::string& d : DiffSnapshots(before, SnapshotTree(ws.tree()))) text += "    " + d + "\n";
  BOOST_TEST(text.empty(), "the tree differs (expected, found):\n" << text << DescribeResult(undo));
}

}  // namespace
}  // namespace guard::e2e
