// guard undo run by the tree's owner, not root: permission bits then matter.
// The tests run as root, so each case runs guard as an unprivileged user
// (`guardtest`, created when missing) on a workspace that user owns.
#define BOOST_TEST_MODULE restore_non_root
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/test_user.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

ProcessResult Run(const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  return RunProcess(spec);
}

ProcessResult RunAsUser(const Workspace& ws, const std::vector<std::string>& argv, uid_t uid, gid_t gid) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  return RunProcess(AsUser(spec, uid, gid));
}

// The unprivileged user the cases run guard as; false (the case skipped,
// saying why) where there is none.
bool TestUserOrSkip(uid_t* uid, gid_t* gid) {
  std::string why;
  if (TestUser(uid, gid, &why)) return true;
  BOOST_TEST_MESSAGE("skipped: " << why);
  return false;
}

std::string Diffs(const TreeSnapshot& expected, const TreeSnapshot& found) {
  std::string text;
  for (const std::string& d : DiffSnapshots(expected, found)) text += "    " + d + "\n";
  return text;
}

BOOST_AUTO_TEST_CASE(UndoByTheOwnerRecreatesAReadOnlyTreeItRemoved) {
  uid_t uid;
  gid_t gid;
  if (!TestUserOrSkip(&uid, &gid)) return;
  Workspace ws;
  // A module cache as Go leaves it: read-only directories and files.
  ws.Mkdir("cache");
  ws.Mkdir("cache/mod@v1");
  ws.Mkdir("cache/mod@v1/sub");
  ws.Write("cache/mod@v1/go.mod", "module mod\n", 0444);
  ws.Write("cache/mod@v1/sub/a.go", "package sub\n", 0444);
  ws.Write("cache/mod@v1/sub/b.go", "package sub // b\n", 0444);
  for (const char* d : {"cache/mod@v1/sub", "cache/mod@v1", "cache"}) BOOST_REQUIRE(chmod(ws.Path(d).c_str(), 0555) == 0);
  ProcessResult own = Run({"chown", "-R", std::to_string(uid) + ":" + std::to_string(gid), ws.dir()});
  BOOST_REQUIRE_MESSAGE(own.exit_code == 0, DescribeResult(own));
  TreeSnapshot before = SnapshotTree(ws.tree());

  ProcessResult run = RunAsUser(ws, {GuardBinary(), "--quiet", "--root", ws.tree(), "--", "bash", "-c",
                                     "chmod -R u+w cache && rm -rf cache"},
                                uid, gid);
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, DescribeResult(run));
  BOOST_REQUIRE(!ws.Exists("cache"));

  ProcessResult undo = RunAsUser(ws, {GuardBinary(), "undo", "--yes"}, uid, gid);
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  TreeSnapshot after = SnapshotTree(ws.tree());
  BOOST_TEST(DiffSnapshots(before, after).empty(),
             "the tree differs (expected, found):\n" << Diffs(before, after) << DescribeResult(undo));
}

// Replay as the owner from the undone tree, where "ro" is 0555 again: the
// removal of ro/f needs the write permission the session's chmod gave, which
// replay sets only after its removals. Before session 19 replay failed
// ("ro/f: Permission denied"); now it opens the directory for the removal
// and leaves it with the mode the session gave it. An unchanged closed
// directory (keep, 0555) gets its own mode back.
BOOST_AUTO_TEST_CASE(ReplayByTheOwnerRemovesAFileFromADirectoryTheSessionOpened) {
  uid_t uid;
  gid_t gid;
  if (!TestUserOrSkip(&uid, &gid)) return;
  Workspace ws;
  ws.Mkdir("ro");
  ws.Write("ro/f", "kept by a read-only directory\n", 0644);
  ws.Mkdir("keep");
  ws.Write("keep/g", "in a closed directory\n", 0644);
  BOOST_REQUIRE(chmod(ws.Path("ro").c_str(), 0555) == 0);
  BOOST_REQUIRE(chmod(ws.Path("keep").c_str(), 0555) == 0);
  ProcessResult own = Run({"chown", "-R", std::to_string(uid) + ":" + std::to_string(gid), ws.dir()});
  BOOST_REQUIRE_MESSAGE(own.exit_code == 0, DescribeResult(own));
  TreeSnapshot before = SnapshotTree(ws.tree());

  ProcessResult run = RunAsUser(ws, {GuardBinary(), "--quiet", "--root", ws.tree(), "--", "bash", "-c",
                                     "rm -f ro/f 2>/dev/null; chmod 755 ro && rm ro/f && chmod u+w keep && "
                                     "rm keep/g && chmod 555 keep"},
                                uid, gid);
  BOOST_REQUIRE_MESSAGE(run.exit_code == 0, DescribeResult(run));
  TreeSnapshot end = SnapshotTree(ws.tree());
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE(ids.size() == 1u);

  ProcessResult undo = RunAsUser(ws, {GuardBinary(), "undo", "--yes", "--session", ids[0]}, uid, gid);
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  TreeSnapshot undone = SnapshotTree(ws.tree());
  BOOST_TEST(DiffSnapshots(before, undone).empty(), "after undo (expected, found):\n" << Diffs(before, undone));
  ProcessResult replayed = RunAsUser(ws, {GuardBinary(), "replay", "--yes", "--session", ids[0]}, uid, gid);
  BOOST_TEST(replayed.exit_code == 0, DescribeResult(replayed));
  TreeSnapshot after = SnapshotTree(ws.tree());
  BOOST_TEST(DiffSnapshots(end, after).empty(), "after replay (expected, found):\n" << Diffs(end, after)
                                                     << DescribeResult(replayed));
}

}  // namespace
}  // namespace guard::e2e
