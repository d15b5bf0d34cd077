// Permission bits changed by calls other than chmod (issue 11, item 6): an
// ACL set through setxattr(system.posix_acl_access), as GNU `cp -a` does
// over an existing directory, and chown, which clears set-uid and set-gid.
// Undo must bring the mode back, replay must set it again.
#define BOOST_TEST_MODULE mode_side_effects
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <functional>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/undone_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// A tree, one session of `script` on it, and the snapshots around it.
struct Scenario : UndoneScript {
  using UndoneScript::UndoneScript;

  uint32_t ModeAfter(const std::string& rel) const {
    const TreeEntry* e = after().Find(rel);
    BOOST_REQUIRE(e != nullptr);
    return e->mode;
  }
};

std::string Program() { return ShellQuote(TestProgram("mode_side_effects")); }

BOOST_AUTO_TEST_CASE(UndoRestoresTheModeOfADirectoryThatCpArchiveCopiedOver) {
  // GNU cp -a sets the mode of an existing destination directory by
  // setxattr(system.posix_acl_access), not chmod.
  Scenario s(
      [](const Workspace& ws) {
        ws.Mkdir("src");
        ws.Mkdir("src/d", 0700);
        ws.Write("src/d/f", "new\n", 0600);
        ws.Mkdir("d", 0755);
        ws.Write("d/f", "old\n", 0644);
      },
      "cp -a src/d .");
  BOOST_REQUIRE_EQUAL(s.ModeAfter("d"), 0700u);
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(UndoRestoresTheModeARawAclSetxattrChanged) {
  for (const char* call : {"setxattr", "lsetxattr", "fsetxattr"}) {
    BOOST_TEST_CONTEXT(call) {
      Scenario s([](const Workspace& ws) { ws.Write("f", "content\n", 0644); },
                 Program() + " " + call + " f 0751");
      BOOST_REQUIRE_EQUAL(s.ModeAfter("f"), 0751u);
      s.ExpectUndoReplayUndo();
    }
  }
}

BOOST_AUTO_TEST_CASE(UndoRestoresTheModeBitsOfAFileGivenAnExtendedAcl) {
  // A named-user entry makes the ACL extended: the kernel keeps the xattr,
  // and the mask sets the group bits. Undo brings the mode bits back (not
  // the ACL: docs/restore.md).
  Scenario s([](const Workspace& ws) { ws.Write("f", "content\n", 0644); },
             Program() + " setxattr-named f 0600");
  BOOST_REQUIRE_EQUAL(s.ModeAfter("f"), 0600u);
  GuardResult r = RunGuardCommand(s.ws, {"undo", "--yes", "--session", s.id()});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  struct stat st;
  BOOST_REQUIRE(lstat(s.ws.Path("f").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0644u);
}

BOOST_AUTO_TEST_CASE(AnXattrThatChangesNoModeIsNotRecorded) {
  Scenario s([](const Workspace& ws) { ws.Write("f", "content\n", 0644); },
             Program() + " setxattr-other f || true");
  SessionView v = SessionView::Load(s.ws.home(), s.id());
  BOOST_TEST(v.FindOp(OpKind::kChmod, "f") == nullptr, v.Dump());
}

BOOST_AUTO_TEST_CASE(UndoBringsBackSetIdBitsThatChownCleared) {
  for (const char* call : {"chown", "lchown", "fchown", "fchownat"}) {
    BOOST_TEST_CONTEXT(call) {
      Scenario s(
          [](const Workspace& ws) {
            ws.Write("setuid", "#!/bin/sh\n", 04755);
            ws.Write("setgid", "#!/bin/sh\n", 02755);
          },
          Program() + " " + call + " setuid && " + Program() + " " + call + " setgid");
      BOOST_REQUIRE_EQUAL(s.ModeAfter("setuid"), 0755u);
      BOOST_REQUIRE_EQUAL(s.ModeAfter("setgid"), 0755u);
      s.ExpectUndoReplayUndo();
    }
  }
}

BOOST_AUTO_TEST_CASE(ChownOfAFileWithoutSetIdBitsIsNotRecorded) {
  Scenario s([](const Workspace& ws) { ws.Write("plain", "x\n", 0755); }, "chown \"$(id -u)\" plain");
  SessionView v = SessionView::Load(s.ws.home(), s.id());
  BOOST_TEST(v.Operations().empty(), v.Dump());
}

}  // namespace
}  // namespace guard::e2e
