// A store that filled up while the session ran: GUARD_HOME is a 2 MiB tmpfs
// (in a private mount namespace of this test), the pre-images of six small
// files are saved, then the session writes them large, so that sealing
// cannot store their final states. Once there is room again, undo restores
// the pre-images it has, and the content it writes over (which the store
// never had) is saved first, as a pre-image of the undo's own session.
#define BOOST_TEST_MODULE restore_full_store
#include <sys/mount.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <memory>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/tmpfs_mount.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Diffs(const TreeSnapshot& expected, const TreeSnapshot& found) {
  std::string text;
  for (const std::string& d : DiffSnapshots(expected, found)) text += "    " + d + "\n";
  return text;
}

BOOST_AUTO_TEST_CASE(UndoRestoresPreImagesWhoseFinalStatesDidNotFit) {
  std::string why;
  if (!CanMountTmpfs(&why)) {
    BOOST_TEST_MESSAGE("skipped: " << why);
    return;
  }
  Workspace ws;
  auto mount = std::make_unique<TmpfsMount>(ws.home(), 2 << 20);
  for (int i = 0; i < 6; ++i) ws.Write("f" + std::to_string(i), "small pre-image " + std::to_string(i) + "\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  // 6 x 512 KiB of fresh random bytes: more than the store can take.
  GuardResult run = RunGuardBash(ws, "for i in 0 1 2 3 4 5; do head -c 524288 /dev/urandom > f$i; done");
  BOOST_REQUIRE_MESSAGE(run.new_sessions.size() == 1, DescribeResult(run));
  TreeSnapshot after = SnapshotTree(ws.tree());
  BOOST_REQUIRE(after.Find("f0") != nullptr && after.Find("f0")->content.size() == 524288);

  // Room again.
  BOOST_REQUIRE_MESSAGE(::mount(nullptr, ws.home().c_str(), nullptr, MS_REMOUNT, "size=64m") == 0,
                        "remounting the tmpfs larger: " << std::strerror(errno));
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", run.new_sessions[0]});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty(),
             "the tree differs (expected, found):\n" << Diffs(before, SnapshotTree(ws.tree())) << DescribeResult(undo));
  BOOST_TEST(undo.err.find("saved nowhere else") == std::string::npos, DescribeResult(undo));
  BOOST_REQUIRE_MESSAGE(undo.new_sessions.size() == 1, DescribeResult(undo));

  // What the undo wrote over was not lost: undoing the undo brings it back.
  GuardResult back = RunGuardCommand(ws, {"undo", "--yes", "--session", undo.new_sessions[0]});
  BOOST_TEST(back.exit_code == 0, DescribeResult(back));
  BOOST_TEST(DiffSnapshots(after, SnapshotTree(ws.tree())).empty(),
             "the tree differs (expected, found):\n" << Diffs(after, SnapshotTree(ws.tree())) << DescribeResult(back));
  mount.reset();  // before the workspace is removed
}

}  // namespace
}  // namespace guard::e2e
