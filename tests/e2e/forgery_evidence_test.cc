// Evidence of forgery fails closed and is recorded (docs/security.md,
// "Failing closed"; issue 36, finding 7): a process of the session forges
// framing in the shim's ring (tests/programs/ring_corrupter.c, which finds
// the ring in its own mappings). From then on:
//  - the session's log says it is incomplete from that time, in `guard
//    status`, `guard sessions`, `guard show` (text and --json) and in undo's
//    plan, and still after guard was killed and `guard recover` sealed it;
//  - under --mode auto every further call goes to the tracer: a later `rm`
//    is recorded, and undo gives its file back byte for byte;
//  - under --mode preload with the default `block` policy a later `rm` is
//    refused (EPERM).
// The unit twin of the reaction: tests/unit/session/shim_feed_evidence_test.cc.
#define BOOST_TEST_MODULE forgery_evidence
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

constexpr const char* kIncomplete = "log incomplete from ";

std::string Bytes(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 9)) & 0xff);
  return s;
}

void SetUpTree(const Workspace& ws) {
  ws.Write("a", "a's only copy\n", 0640);
  ws.Write("b", Bytes(200 * 1024, 3), 0600);
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every listing of session `id` says its log is incomplete.
void ExpectEveryListingSaysIncomplete(const Workspace& ws, const std::string& id) {
  GuardResult status = RunGuardCommand(ws, {"status"});
  BOOST_TEST(Has(status.out, kIncomplete), DescribeResult(status));
  GuardResult status_json = RunGuardCommand(ws, {"status", "--json"});
  nlohmann::json sj = nlohmann::json::parse(status_json.out, nullptr, false);
  BOOST_REQUIRE_MESSAGE(sj.is_object(), DescribeResult(status_json));
  BOOST_TEST(sj["last"]["id"] == id);
  BOOST_TEST(sj["last"]["log_incomplete"].is_object(), DescribeResult(status_json));
  BOOST_TEST(Has(sj["last"]["log_incomplete"].value("what", ""), "forged"), DescribeResult(status_json));

  GuardResult sessions = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(Has(sessions.out, kIncomplete), DescribeResult(sessions));
  GuardResult sessions_json = RunGuardCommand(ws, {"sessions", "--json"});
  nlohmann::json a = nlohmann::json::parse(sessions_json.out, nullptr, false);
  BOOST_REQUIRE_MESSAGE(a.is_array() && a.size() == 1u, DescribeResult(sessions_json));
  BOOST_TEST(a[0]["log_incomplete"].is_object(), DescribeResult(sessions_json));

  GuardResult show = RunGuardCommand(ws, {"show", "--session", id});
  BOOST_TEST(Has(show.out, kIncomplete), DescribeResult(show));
  GuardResult show_json = RunGuardCommand(ws, {"show", "--json", "--session", id});
  BOOST_TEST(Has(show_json.out, "\"log-incomplete\""), DescribeResult(show_json));

  GuardResult plan = RunGuardCommand(ws, {"undo", "--dry-run", "--session", id});
  BOOST_TEST(Has(plan.out, kIncomplete), DescribeResult(plan));
}

BOOST_AUTO_TEST_CASE(AutoForgedFramingMarksTheLogIncompleteAndTheTracerRecordsWhatFollows) {
  Workspace ws;
  SetUpTree(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardRun run;
  run.command = {"bash", "-c", TestProgram("ring_corrupter") + "; echo corrupter=$?; rm a; rm b"};
  run.guard_options = {"--mode", "auto"};
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(Has(r.out, "corrupter=0"), "guard did not fail closed\n" << DescribeResult(r));
  BOOST_REQUIRE_MESSAGE(r.new_sessions.size() == 1u, DescribeResult(r));
  BOOST_TEST(!ws.Exists("a"));
  BOOST_TEST(!ws.Exists("b"));
  const std::string id = r.new_sessions[0];
  ExpectEveryListingSaysIncomplete(ws, id);
  // The calls after the evidence went to the tracer: recorded, and undone.
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()) << DescribeResult(undo));
}

// Finding 1's order: the `rm` comes right after the forgery, before guard
// may have seen it, so its CALL may sit behind the forged record, never to
// be read. Either way a's bytes are not lost: recorded (by the shim before
// the forgery was seen, or by the tracer after), undo gives them back; lost
// with its CALL, its pre-image is kept and `guard export --pending` gives
// them back.
BOOST_AUTO_TEST_CASE(AnRmRightAfterTheForgeryIsRecordedOrItsPreImageKept) {
  Workspace ws;
  SetUpTree(ws);
  GuardRun run;
  run.command = {"bash", "-c", TestProgram("ring_corrupter") + " 0; rm a"};
  run.guard_options = {"--mode", "auto"};
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_MESSAGE(r.new_sessions.size() == 1u, DescribeResult(r));
  const std::string id = r.new_sessions[0];
  BOOST_TEST(!ws.Exists("a"));
  GuardResult show = RunGuardCommand(ws, {"show", "--json", "--session", id});
  nlohmann::json ops = nlohmann::json::parse(show.out, nullptr, false);
  BOOST_REQUIRE_MESSAGE(ops.is_array(), DescribeResult(show));
  bool incomplete = false;
  std::string kept_key;
  for (const nlohmann::json& e : ops) {
    if (e.value("op", "") == "log-incomplete") incomplete = true;
    if (e.value("op", "") == "pre-image-without-record") kept_key = e.value("key", "");
  }
  BOOST_TEST(incomplete, DescribeResult(show));
  if (!kept_key.empty()) {
    GuardResult exported = RunGuardCommand(ws, {"export", "--session", id, "--pending", kept_key});
    BOOST_TEST(exported.out == "a's only copy\n", DescribeResult(exported));
  } else {
    GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
    BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
    BOOST_TEST(ws.Read("a") == "a's only copy\n");
  }
}

BOOST_AUTO_TEST_CASE(PreloadForgedFramingRefusesFurtherChangesUnderBlock) {
  Workspace ws;
  SetUpTree(ws);
  GuardRun run;
  run.command = {"bash", "-c", TestProgram("ring_corrupter") + "; echo corrupter=$?; rm b; echo rm=$?"};
  run.guard_options = {"--mode", "preload"};
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(Has(r.out, "corrupter=0"), "guard did not fail closed\n" << DescribeResult(r));
  BOOST_TEST(Has(r.out, "rm=1"), DescribeResult(r));
  BOOST_TEST(Has(r.err, "Operation not permitted"), DescribeResult(r));
  BOOST_TEST(ws.Read("b") == Bytes(200 * 1024, 3));
  BOOST_REQUIRE_MESSAGE(r.new_sessions.size() == 1u, DescribeResult(r));
  GuardResult show = RunGuardCommand(ws, {"show", "--session", r.new_sessions[0]});
  BOOST_TEST(Has(show.out, kIncomplete), DescribeResult(show));
}

// guard killed after the evidence: recovery seals the session, and the
// flag, which lives in the journal, stays.
BOOST_AUTO_TEST_CASE(RecoveryAfterAKilledGuardKeepsTheFlag) {
  Workspace ws;
  SetUpTree(ws);
  KillWhen when;
  when.env["GUARD_MODE"] = "auto";
  const std::string ready = ws.outside() + "/ready";
  when.script = TestProgram("ring_corrupter") + " && rm a && touch " + ready + " && sleep 600";
  when.ready = [ready] { return access(ready.c_str(), F_OK) == 0; };
  when.ready_for_kill = [](const std::string&) { return true; };
  KilledSession k = RunAndKillGuard(ws, when);
  GuardResult recover = RunGuardCommand(ws, {"recover"});
  BOOST_TEST(recover.exit_code == 0, DescribeResult(recover));
  BOOST_TEST(Has(recover.err, kIncomplete), DescribeResult(recover));
  ExpectEveryListingSaysIncomplete(ws, k.id);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", k.id});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(ws.Read("a") == "a's only copy\n");
}

}  // namespace
}  // namespace guard::e2e
