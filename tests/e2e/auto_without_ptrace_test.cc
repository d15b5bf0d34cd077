// `--mode auto` where ptrace is refused (GUARD_TEST_REFUSE_PTRACE=1 makes it
// so on a machine that allows it): the preload shim captures, with watch
// mode as its net, and guard says so once. A file written the way Claude
// Code's Bun threads write (created by raw system calls, renamed by libc)
// and files made by raw calls alone are undone exactly; the shim alone
// (--mode preload) leaves them behind, which is what the net is for.
// Unit twin of the comparison: tests/unit/watch/watched_tree_test.cc.
#define BOOST_TEST_MODULE auto_without_ptrace
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

struct Tree {
  Workspace ws;
  TreeSnapshot before;
  Tree() {
    ws.Write("settings.json", "{\"theme\": \"light\"}\n");
    ws.Write("notes.txt", "untouched\n");
    before = SnapshotTree(ws.tree());
  }
  GuardResult Run(const std::string& mode, bool refuse_ptrace) {
    GuardRun run;
    run.command = {TestProgram("raw_temp_rename")};
    run.quiet = false;
    run.guard_options = {"--mode", mode};
    run.env["GUARD_MODE"] = std::nullopt;
    if (refuse_ptrace) run.env["GUARD_TEST_REFUSE_PTRACE"] = "1";
    GuardResult r = RunGuard(ws, run);
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);
    BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
    BOOST_REQUIRE_EQUAL(ws.Read("settings.json"), "{\"theme\": \"dark\"}\n");
    return r;
  }
};

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

BOOST_AUTO_TEST_CASE(WithoutPtraceAutoUsesTheShimWithWatchModeAsItsNetAndSaysSoOnce) {
  Tree t;
  GuardResult r = t.Run("auto", /*refuse_ptrace=*/true);
  BOOST_TEST(Count(r.err, "ptrace is not allowed here") == 1u, r.err);
  BOOST_TEST(Contains(r.err, "with watch mode as its net"), r.err);
  UndoGivesBack(t.ws, r, t.before, 60);
}

BOOST_AUTO_TEST_CASE(TheShimAloneLeavesTheRawFilesBehindAfterUndo) {
  Tree t;
  GuardResult r = t.Run("preload", /*refuse_ptrace=*/false);
  GuardResult undo = RunGuardWithin(t.ws, {"undo", "--yes", "--session", r.new_sessions[0]}, 60);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  // What the net closes: the shim never saw these made, and undoing the
  // rename it saw puts the temporary file back.
  BOOST_TEST(t.ws.Exists("settings.json.tmp.4242"));
  BOOST_TEST(t.ws.Exists("raw-only.txt"));
  BOOST_TEST(t.ws.Exists("raw-dir/inside.txt"));
}

}  // namespace
}  // namespace guard::e2e
