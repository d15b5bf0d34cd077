#include "tests/e2e/support/durability_checks.h"

#include <boost/test/unit_test.hpp>

#include <stdexcept>

namespace guard::e2e {

GuardResult RunGuardWithin(const Workspace& ws, const std::vector<std::string>& args, int timeout_seconds) {
  GuardCommand command;
  command.args = args;
  command.timeout_seconds = timeout_seconds;
  return RunGuardCommand(ws, command);
}

nlohmann::json SessionsJson(const Workspace& ws) {
  GuardResult r = RunGuardWithin(ws, {"sessions", "--json"}, 30);
  if (r.exit_code != 0) throw std::runtime_error("guard sessions --json: " + DescribeResult(r));
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) throw std::runtime_error("guard sessions --json printed no JSON array:\n" + r.out);
  return j;
}

std::string SessionStateOf(const Workspace& ws, const std::string& id) {
  for (const nlohmann::json& s : SessionsJson(ws)) {
    if (s.value("id", "") == id) return s.value("state", "");
  }
  return "";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

void UndoGivesBack(const Workspace& ws, const GuardResult& r, const TreeSnapshot& before, int timeout_seconds) {
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  GuardResult undo = RunGuardWithin(ws, {"undo", "--yes", "--session", r.new_sessions[0]}, timeout_seconds);
  BOOST_TEST(undo.exit_code == 0, undo.err);
  std::vector<std::string> diff = DiffSnapshots(before, SnapshotTree(ws.tree()));
  BOOST_TEST(diff.empty(), "after undo: " << (diff.empty() ? "" : diff.front()));
}

}  // namespace guard::e2e
