// A package upgrade during a session: the shim guard loads is replaced, while
// the command runs, by a build that speaks another protocol
// (common/shim_interface.h), as dpkg renames a new file over the old one,
// and the programs started after it load the new one. Both ways round: a
// newer shim beside this (older) guard, an older shim beside this (newer)
// guard. The refusing shim captures nothing and prints nothing into its
// programs; guard says so in one line. Under --mode auto the tracer captures
// those programs (undo gives the tree back byte for byte); under --mode
// preload the capture-failure policy applies (block: the changes are
// refused; allow: they run unrecorded).
#define BOOST_TEST_MODULE shim_protocol
#include <boost/test/unit_test.hpp>

#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 120;
// guard's line (supervisor/capture/shim_mismatch.cc).
constexpr const char* kLine = "loaded a preload shim of protocol ";
// The shim's own line for a call it cannot capture alone (capture_alone.c),
// which a refusing shim must not print into its programs.
constexpr const char* kShimsOwnLine = "cannot capture this";

struct OtherShim {
  const char* name;
  const char* library;
};
const OtherShim kOtherShims[] = {{"newer", GUARD_SHIM_NEWER}, {"older", GUARD_SHIM_OLDER}};

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The installed shim: a copy of this build's at outside/lib/, the other
// protocol's build beside it, to be renamed over it mid-session. The tree:
// files the programs after the upgrade change.
std::string Install(const Workspace& ws, const OtherShim& other) {
  MakeDir(ws.outside() + "/lib");
  const std::string shim = ws.outside() + "/lib/libguard-shim.so";
  WriteFile(shim, ReadFile(GUARD_SHIM_LIBRARY), 0755);
  WriteFile(shim + ".new", ReadFile(other.library), 0755);
  ws.Write("kept.txt", "rewritten after the upgrade\n");
  ws.Write("gone.txt", "removed after the upgrade\n");
  ws.Write("from.txt", "renamed after the upgrade\n");
  return shim;
}

// first.txt by the shim guard started with; then the upgrade; then a new
// program, which loads the other shim, and its children change the rest.
GuardResult RunUpgrade(const Workspace& ws, const std::string& shim, const std::vector<std::string>& options) {
  GuardRun run;
  run.command = {"bash", "-c",
                 "echo before > first.txt && mv -f '" + shim + ".new' '" + shim + "' && "
                 "bash -c 'echo after > second.txt; echo again > kept.txt; rm gone.txt; mv -f from.txt to.txt'; true"};
  run.guard_options = options;
  run.env["GUARD_SHIM_PATH"] = shim;
  run.timeout_seconds = kTimeoutSeconds;
  return RunGuard(ws, run);
}

BOOST_AUTO_TEST_CASE(UnderAutoTheTracerCapturesWhatARefusingShimLeavesAndGuardSaysSoOnce) {
  for (const OtherShim& other : kOtherShims) {
    BOOST_TEST_CONTEXT("the " << other.name << " shim") {
      Workspace ws;
      const std::string shim = Install(ws, other);
      const TreeSnapshot before = SnapshotTree(ws.tree());
      GuardResult r = RunUpgrade(ws, shim, {"--mode", "auto"});
      BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
      BOOST_TEST(Count(r.err, kLine) == 1u, r.err);
      BOOST_TEST(r.err.find("the tracer alone captures") != std::string::npos, r.err);
      BOOST_TEST(r.err.find(kShimsOwnLine) == std::string::npos, r.err);
      BOOST_TEST(ws.Read("first.txt") == "before\n");
      BOOST_TEST(ws.Read("second.txt") == "after\n");
      BOOST_TEST(ws.Read("kept.txt") == "again\n");
      BOOST_TEST(!ws.Exists("gone.txt"));
      BOOST_TEST(ws.Read("to.txt") == "renamed after the upgrade\n");
      // Every change, before the upgrade and after it, is in the session.
      UndoGivesBack(ws, r, before, kTimeoutSeconds);
    }
  }
}

BOOST_AUTO_TEST_CASE(UnderPreloadWithBlockARefusingShimsChangesAreRefusedAndGuardSaysSoOnce) {
  for (const OtherShim& other : kOtherShims) {
    BOOST_TEST_CONTEXT("the " << other.name << " shim") {
      Workspace ws;
      const std::string shim = Install(ws, other);
      const TreeSnapshot before = SnapshotTree(ws.tree());
      GuardResult r = RunUpgrade(ws, shim, {"--mode", "preload", "--on-capture-failure", "block"});
      BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
      BOOST_TEST(Count(r.err, kLine) == 1u, r.err);
      BOOST_TEST(r.err.find("their changes are refused (--on-capture-failure=block)") != std::string::npos, r.err);
      BOOST_TEST(r.err.find(kShimsOwnLine) == std::string::npos, r.err);
      // Before the upgrade: captured. After it: refused, the tree as it was.
      BOOST_TEST(ws.Read("first.txt") == "before\n");
      BOOST_TEST(!ws.Exists("second.txt"));
      BOOST_TEST(ws.Read("kept.txt") == "rewritten after the upgrade\n");
      BOOST_TEST(ws.Exists("gone.txt"));
      BOOST_TEST(ws.Exists("from.txt"));
      BOOST_TEST(!ws.Exists("to.txt"));
      UndoGivesBack(ws, r, before, kTimeoutSeconds);
    }
  }
}

BOOST_AUTO_TEST_CASE(UnderPreloadWithAllowARefusingShimsChangesRunAndGuardSaysTheyAreUnrecorded) {
  Workspace ws;
  const std::string shim = Install(ws, kOtherShims[0]);
  GuardResult r = RunUpgrade(ws, shim, {"--mode", "preload", "--on-capture-failure", "allow"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(Count(r.err, kLine) == 1u, r.err);
  BOOST_TEST(r.err.find("their changes run unrecorded (--on-capture-failure=allow)") != std::string::npos, r.err);
  BOOST_TEST(r.err.find(kShimsOwnLine) == std::string::npos, r.err);
  BOOST_TEST(ws.Read("second.txt") == "after\n");
  BOOST_TEST(!ws.Exists("gone.txt"));
}

// The same session without an upgrade says nothing of protocols.
BOOST_AUTO_TEST_CASE(AShimOfGuardsOwnProtocolIsNotReported) {
  Workspace ws;
  MakeDir(ws.outside() + "/lib");
  const std::string shim = ws.outside() + "/lib/libguard-shim.so";
  WriteFile(shim, ReadFile(GUARD_SHIM_LIBRARY), 0755);
  WriteFile(shim + ".new", ReadFile(GUARD_SHIM_LIBRARY), 0755);
  ws.Write("kept.txt", "x\n");
  ws.Write("gone.txt", "x\n");
  ws.Write("from.txt", "x\n");
  GuardResult r = RunUpgrade(ws, shim, {"--mode", "preload", "--on-capture-failure", "block"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find(kLine) == std::string::npos, r.err);
  BOOST_TEST(ws.Read("second.txt") == "after\n");
}

}  // namespace
}  // namespace guard::e2e
