// A guard killed inside its seal, while it places pending blobs
// (docs/format.md (Part II), "Resolution"): the kBlobResolved records that
// map each pending name to its key are durable, and some or none of the
// pending names have been renamed into their objects. Nothing else could
// ever place the rest, and a reader maps the names to keys: recovery must
// finish every placement, leave no pending name of the session, and undo
// must give the tree back byte for byte.
//
// The kill lands there every time: guard's test-only kill point
// (supervisor/capture/test_seal_kill_point.h, GUARD_TEST_KILL_IN_SEAL)
// kills the supervisor once N blobs are placed.
#define BOOST_TEST_MODULE durability_seal_kill
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <filesystem>
#include <set>
#include <string>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr int kTimeoutSeconds = 60;
constexpr size_t kFiles = 6;

std::set<std::string> PendingNamesOf(const Workspace& ws, const std::string& id) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(ws.home() + "/store/pending")) {
    std::string n = e.path().filename();
    if (n.rfind(id + "-", 0) == 0) out.insert(n);
  }
  return out;
}

std::string ObjectPath(const Workspace& ws, const BlobKey& key) {
  return ws.home() + "/store/objects/" + key.Hex().substr(0, 2) + "/" + key.Hex();
}

void KillInSealThenRecover(size_t placed) {
  Workspace ws;
  for (size_t i = 0; i < kFiles; ++i) ws.Write("f" + std::to_string(i), "pre-image " + std::to_string(i) + "\n");
  ws.Write("twin", "pre-image 0\n");  // content another pending blob has: dropped, not renamed
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {"sh", "-c", "rm -f f* twin"};
  run.env["GUARD_TEST_KILL_IN_SEAL"] = std::to_string(placed);
  run.timeout_seconds = kTimeoutSeconds;
  GuardResult killed = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(killed.new_sessions.size(), 1u);
  std::string id = killed.new_sessions[0];
  BOOST_TEST(ReadFile(ws.home() + "/sessions/" + id + "/meta.json").find("\"running\"") != std::string::npos,
             "the seal was not killed: " << DescribeResult(killed));

  // Every pending blob was recorded as resolved before any was placed.
  SessionView view = SessionView::Load(ws.home(), id);
  std::set<std::string> recorded;
  for (const Record& r : view.records()) {
    if (r.kind == OpKind::kBlobResolved) recorded.insert(r.pending);
  }
  BOOST_TEST(recorded.size() == kFiles + 1);
  std::set<std::string> left = PendingNamesOf(ws, id);
  if (placed == 0) BOOST_TEST(left.size() == kFiles + 1);
  BOOST_TEST(left.size() <= kFiles + 1 - placed);

  GuardResult rec = RunGuardWithin(ws, {"recover"}, kTimeoutSeconds);
  BOOST_TEST(rec.exit_code == 0, DescribeResult(rec));
  BOOST_TEST(Contains(rec.err, "recovered session " + id + ":"), DescribeResult(rec));
  BOOST_TEST(PendingNamesOf(ws, id).empty());
  SessionView recovered = SessionView::Load(ws.home(), id);
  for (const Record& r : recovered.records()) {
    if (r.kind == OpKind::kBlobResolved) {
      BOOST_TEST(std::filesystem::exists(ObjectPath(ws, r.key)), r.pending << " has no object " << r.key.Hex());
    }
  }

  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", id}, kTimeoutSeconds);
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "undo left the tree unlike before the session: " << diff.front());
}

BOOST_AUTO_TEST_CASE(RecoveryPlacesThePendingBlobsOfASealKilledBeforeItPlacedAny) {
  KillInSealThenRecover(0);
}

BOOST_AUTO_TEST_CASE(RecoveryPlacesTheRestOfThePendingBlobsOfASealKilledWhilePlacing) {
  KillInSealThenRecover(3);
}

}  // namespace
}  // namespace guard::e2e
