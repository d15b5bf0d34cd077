// A program killed inside a call the shim captures, under guard --mode
// auto (the tracer's equivalent: durability_kill_inside_call_test.cc). The
// shim's test-only kill points (interpose/linux/test_kill.h,
// GUARD_SHIM_TEST_KILL="<phase>:1") kill tests/programs/shim_capture_calls
// with SIGKILL in its one captured call:
//   pre-image  the pending link or copy made, no CALL in the ring;
//   call       the CALL in the ring, the call itself not made;
//   outcome    the call made, its OUTCOME not in the ring.
// Each time the session seals, `guard undo --yes --session ID` gives back
// the tree byte for byte as it was before the run, and no pending file of
// the session is left in $GUARD_HOME/store/pending.
#define BOOST_TEST_MODULE auto_kill_point
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

namespace bdata = boost::unit_test::data;

struct CallCase {
  const char* name;
  std::vector<std::string> args;  // shim_capture_calls' scenario
};

const CallCase kCalls[] = {
    {"unlink", {"unlink", "victim"}},
    {"open-trunc", {"trunc", "big"}},
    {"rename-over", {"rename", "replacement", "target"}},
    {"mkdir", {"mkdir", "dir"}},
};
const char* const kPhases[] = {"pre-image", "call", "outcome"};

// What each call acts on, with content the undo must give back.
void SetUpTree(const Workspace& ws) {
  ws.Write("victim", "deleted in the killed call\n", 0640);
  ws.Write("big", std::string(64 * 1024, 'b'), 0600);
  ws.Write("target", "renamed over in the killed call\n");
  ws.Write("replacement", "moves over target\n");
}

// The session's files left in the pending area ("<id>-...").
std::vector<std::string> PendingOf(const Workspace& ws, const std::string& id) {
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(ws.home() + "/store/pending", ec)) {
    std::string name = e.path().filename();
    if (name.rfind(id + "-", 0) == 0) left.push_back(name);
  }
  return left;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += "    " + s + "\n";
  return out;
}

// Runs `call` killed at `phase` on a fresh tree, checks the kill, the seal
// and the undo; the session's pending files left after the seal into *left.
void ExpectKilledCallUndone(const CallCase& call, const char* phase, std::vector<std::string>* left) {
  Workspace ws;
  SetUpTree(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run;
  run.command = {TestProgram("shim_capture_calls")};
  run.command.insert(run.command.end(), call.args.begin(), call.args.end());
  run.guard_options = {"--mode", "auto"};
  run.env["GUARD_MODE"] = "auto";
  run.env["GUARD_SHIM_TEST_KILL"] = std::string(phase) + ":1";
  GuardResult r = RunGuard(ws, run);
  // Killed by its kill point: guard reports the agent's death as a shell does.
  BOOST_TEST(r.exit_code == 128 + 9, DescribeResult(r));
  BOOST_REQUIRE_MESSAGE(r.new_sessions.size() == 1u, DescribeResult(r));
  const std::string id = r.new_sessions[0];
  // The kill came where it was asked: before the call (the tree as it
  // was), or once the call had run.
  const bool ran = std::string(phase) == "outcome";
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty() == !ran);
  *left = PendingOf(ws, id);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after undo the tree differs (expected, found):\n" << Join(diff) << DescribeResult(undo));
}

// Killed once its CALL is in the ring: the supervisor adopted the pre-image
// and resolves it at the seal.
BOOST_DATA_TEST_CASE(ACallKilledInsideItIsUndoneAndLeavesNoPendingFile, bdata::xrange(4) * bdata::xrange(1, 3), call,
                     phase) {
  BOOST_TEST_CONTEXT(kCalls[call].name << " killed at " << kPhases[phase]) {
    std::vector<std::string> left;
    ExpectKilledCallUndone(kCalls[call], kPhases[phase], &left);
    BOOST_TEST(left.empty(), "pending files of the session left after its seal:\n" << Join(left));
  }
}

// Killed before its CALL: nothing happened, and undo has nothing to do; but
// the pre-image the shim made (unlink, open O_TRUNC, rename over) is in the
// pending area under the session's name, and no record names it.
// The live seal keeps them, resolved into the store (orphan_pending.h,
// KeepUnnamedShimPending; tests/e2e/unnamed_pre_image_test.cc): none is
// left in the pending area. mkdir makes none.
BOOST_DATA_TEST_CASE(APreImageOfAProcessKilledBeforeItsCallIsGoneAfterTheSeal, bdata::xrange(4), call) {
  BOOST_TEST_CONTEXT(kCalls[call].name << " killed at " << kPhases[0]) {
    std::vector<std::string> left;
    ExpectKilledCallUndone(kCalls[call], kPhases[0], &left);
    BOOST_TEST(left.empty(), "pending files of the session left after its seal:\n" << Join(left));
  }
}

}  // namespace
}  // namespace guard::e2e
