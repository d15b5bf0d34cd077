// A pre-image is never deleted because no record names it (issue 36;
// supervisor/session/orphan_pending.h, KeepUnnamedShimPending): the shim's
// pre-image of a process killed between its link and its CALL
// (GUARD_SHIM_TEST_KILL=pre-image:1, interpose/linux/test_kill.h) is one
// such, as is one whose CALL a forged ring record made unreadable. The
// seal, and recovery after a killed guard, keep it in the store; `guard
// show` lists it with its size, time and content hash, and `guard export
// --pending KEY` gives its bytes back exactly.
#define BOOST_TEST_MODULE unnamed_pre_image
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

const std::string kVictim = std::string("the only saved copy\n") + std::string(5000, 'v');

// The keys `guard show` lists as pre-images kept without a record, each
// with the size it states ("  pre-image KEY  N bytes  saved TIME").
std::vector<std::pair<std::string, std::string>> ListedPreImages(const std::string& show) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(show);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word, key, size, unit, saved;
    if (!(words >> word >> key >> size >> unit >> saved) || word != "pre-image" || unit != "bytes" || saved != "saved") {
      continue;
    }
    if (key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string::npos) out.emplace_back(key, size);
  }
  return out;
}

// Session `id` lists one pre-image kept without a record, kVictim's bytes.
void ExpectVictimListedAndExported(const Workspace& ws, const std::string& id) {
  GuardResult show = RunGuardCommand(ws, {"show", "--session", id});
  BOOST_TEST(show.exit_code == 0, DescribeResult(show));
  auto listed = ListedPreImages(show.out);
  BOOST_REQUIRE_MESSAGE(listed.size() == 1u, DescribeResult(show));
  BOOST_TEST(listed[0].second == std::to_string(kVictim.size()));
  GuardResult json = RunGuardCommand(ws, {"show", "--json", "--session", id});
  nlohmann::json a = nlohmann::json::parse(json.out, nullptr, false);
  BOOST_REQUIRE(a.is_array());
  size_t found = 0;
  for (const nlohmann::json& e : a) {
    if (e.value("op", "") != "pre-image-without-record") continue;
    ++found;
    BOOST_TEST(e["key"] == listed[0].first);
    BOOST_TEST(e["size"] == kVictim.size());
  }
  BOOST_TEST(found == 1u, DescribeResult(json));
  GuardResult exported = RunGuardCommand(ws, {"export", "--session", id, "--pending", listed[0].first});
  BOOST_TEST(exported.exit_code == 0, DescribeResult(exported));
  BOOST_TEST(exported.out == kVictim);
  // Only the session's own pre-images: another key is refused.
  GuardResult other = RunGuardCommand(ws, {"export", "--session", id, "--pending", std::string(32, '0')});
  BOOST_TEST(other.exit_code == 2, DescribeResult(other));
}

BOOST_AUTO_TEST_CASE(ThePreImageOfAProcessKilledBeforeItsCallSurvivesTheSeal) {
  Workspace ws;
  ws.Write("victim", kVictim);
  GuardRun run;
  run.command = {TestProgram("shim_capture_calls"), "unlink", "victim"};
  run.guard_options = {"--mode", "auto"};
  run.env["GUARD_SHIM_TEST_KILL"] = "pre-image:1";
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 128 + 9, DescribeResult(r));
  BOOST_REQUIRE_MESSAGE(r.new_sessions.size() == 1u, DescribeResult(r));
  ExpectVictimListedAndExported(ws, r.new_sessions[0]);
}

BOOST_AUTO_TEST_CASE(ThePreImageOfAProcessKilledBeforeItsCallSurvivesRecovery) {
  Workspace ws;
  ws.Write("victim", kVictim);
  KillWhen when;
  when.env["GUARD_MODE"] = "auto";
  const std::string ready = ws.outside() + "/ready";
  when.script = "GUARD_SHIM_TEST_KILL=pre-image:1 " + TestProgram("shim_capture_calls") + " unlink victim; touch " +
                ready + " && sleep 600";
  when.ready = [ready] { return access(ready.c_str(), F_OK) == 0; };
  when.ready_for_kill = [](const std::string&) { return true; };
  KilledSession k = RunAndKillGuard(ws, when);
  GuardResult recover = RunGuardCommand(ws, {"recover"});
  BOOST_TEST(recover.exit_code == 0, DescribeResult(recover));
  ExpectVictimListedAndExported(ws, k.id);
}

}  // namespace
}  // namespace guard::e2e
