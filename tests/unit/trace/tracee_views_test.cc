// TraceeViews (supervisor/trace/tracee_views.h): each thread's view kept
// between calls, and nothing kept while a call that may change a view runs.
#define BOOST_TEST_MODULE tracee_views
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>

#include "supervisor/trace/tracee_views.h"
#include "tests/unit/support/parked_process.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::ParkedProcess;
using testing::TempDir;

BOOST_AUTO_TEST_CASE(AViewIsReadFromProcAndKept) {
  ParkedProcess p([] { return true; });
  TraceeViews views;
  View v;
  BOOST_TEST(views.Get(p.pid(), &v).ok());
  BOOST_TEST(v.IsGuards());
  BOOST_TEST(views.kept() == 1u);
  BOOST_TEST(views.Get(p.pid(), &v).ok());
  BOOST_TEST(views.kept() == 1u);
  views.Forget(p.pid());
  BOOST_TEST(views.kept() == 0u);
}

BOOST_AUTO_TEST_CASE(NothingIsKeptFromAViewChangeUntilTheChangingThreadStopsAgain) {
  ParkedProcess a([] { return true; }), b([] { return true; });
  TraceeViews views;
  View v;
  BOOST_TEST(views.Get(a.pid(), &v).ok());
  // b enters chroot: a's view may change too (a shared fs_struct, a
  // pivot_root), so every kept view goes, and none is kept meanwhile.
  views.ChangeBegins(b.pid());
  BOOST_TEST(views.kept() == 0u);
  BOOST_TEST(views.Get(a.pid(), &v).ok());
  BOOST_TEST(views.kept() == 0u);
  views.Stopped(a.pid());  // another thread's stop says nothing of b's call
  BOOST_TEST(views.Get(a.pid(), &v).ok());
  BOOST_TEST(views.kept() == 0u);
  views.Stopped(b.pid());  // b is past its call
  BOOST_TEST(views.Get(a.pid(), &v).ok());
  BOOST_TEST(views.kept() == 1u);
}

BOOST_AUTO_TEST_CASE(AThreadThatDiesInsideAViewChangeLetsKeepingResume) {
  ParkedProcess a([] { return true; });
  TraceeViews views;
  View v;
  views.ChangeBegins(a.pid() + 1000000);
  views.Forget(a.pid() + 1000000);
  BOOST_TEST(views.Get(a.pid(), &v).ok());
  BOOST_TEST(views.kept() == 1u);
}

BOOST_AUTO_TEST_CASE(AChrootedProcessHasItsJailForRoot) {
  if (geteuid() != 0) {
    BOOST_TEST_MESSAGE("SKIPPED: chroot needs root");
    return;
  }
  TempDir tmp;
  std::string jail = std::filesystem::canonical(tmp.path).string();
  ParkedProcess p([&jail] { return chroot(jail.c_str()) == 0 && chdir("/") == 0; });
  View v;
  BOOST_TEST(ReadView(p.pid(), &v).ok());
  BOOST_TEST(v.root == jail);
  BOOST_TEST(!v.IsGuards());
}

BOOST_AUTO_TEST_CASE(TheCallsThatChangeAViewAreKnown) {
  for (long nr : {SYS_chroot, SYS_pivot_root, SYS_unshare, SYS_setns, SYS_mount, SYS_umount2, SYS_move_mount}) {
    BOOST_TEST(IsViewChange(nr));
  }
  for (long nr : {SYS_mount, SYS_umount2, SYS_open_tree, SYS_fsmount, SYS_mount_setattr}) BOOST_TEST(IsMountCall(nr));
  for (long nr : {SYS_openat, SYS_chdir, SYS_fchdir, SYS_clone}) BOOST_TEST(!IsViewChange(nr));
}

}  // namespace
}  // namespace guard
