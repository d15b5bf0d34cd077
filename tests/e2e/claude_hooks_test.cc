// guard hooks with the real Claude Code: the one on the PATH, else the one
// tools/setup.sh installs beside guard; skipped, with a warning, without
// either. Not logged in and with no network, `claude -p PROMPT` runs the
// UserPromptSubmit hook before it gives up: the installed hook makes a mark
// labelled with the prompt's first words in the guard session claude runs
// in, and uninstalling leaves the project as it was. With a stand-in for the
// Messages API that answers with one Bash tool call, the tool hooks mark a
// step before and after it. (A longer session through Claude Code's own
// edit tools: claude_agent_session_test.)
#define BOOST_TEST_MODULE claude_hooks
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/claude_standin.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

BOOST_AUTO_TEST_CASE(PromptHookOfRealClaudeMarksTheGuardSession) {
  if (FindClaude().empty()) {
    BOOST_WARN_MESSAGE(false, "skipped: claude (Claude Code) is not installed (npm install -g @anthropic-ai/claude-code)");
    return;
  }
  Workspace ws;
  ws.Write("README", "a project\n");
  // Claude Code's own state goes to a home of the test's, never the user's.
  const std::string home = ws.outside() + "/home";
  MakeDir(home);
  ProcessSpec install;
  install.argv = {GuardBinary(), "hooks", "install", "claude", "--project", "--root", ws.tree()};
  install.env = GuardEnv(ws);
  install.env["HOME"] = home;
  ProcessResult r = RunProcess(install);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE(ws.Exists(".claude/settings.json"));

  GuardRun run;
  run.command = {FindClaude(), "-p", "please rename README to README.md and stop"};
  run.env["HOME"] = home;
  run.env["ANTHROPIC_API_KEY"] = std::nullopt;
  run.env["DISABLE_AUTOUPDATER"] = "1";
  run.timeout_seconds = 180;
  GuardResult g = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(g.new_sessions.size(), 1u);
  GuardResult show = RunGuardCommand(ws, {"show", "--session", g.new_sessions[0], "--json"});
  BOOST_REQUIRE_MESSAGE(show.exit_code == 0, DescribeResult(show));
  size_t marks = 0;
  std::string label;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] != "mark") continue;
    ++marks;
    label = e["label"].get<std::string>();
    BOOST_TEST(e["step"] == false);
  }
  BOOST_TEST(marks == 1u, "claude's output: " << DescribeResult(g));
  BOOST_TEST(label == "prompt: please rename README to README.md and stop");

  install.argv[2] = "uninstall";
  r = RunProcess(install);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!ws.Exists(".claude/settings.json"));
}

BOOST_AUTO_TEST_CASE(ToolHookOfRealClaudeMarksAStepAndUndoTurnsRemovesWhatBashDid) {
  if (FindClaude().empty() || FindOnPath("python3").empty()) {
    BOOST_WARN_MESSAGE(false, "skipped: needs claude (npm install -g @anthropic-ai/claude-code) and python3");
    return;
  }
  Workspace ws;
  ws.Write("README", "a project\n");
  const std::string home = ws.outside() + "/home";
  MakeDir(home);
  // Every request that offers tools gets a Bash tool_use writing tool.txt
  // until the conversation holds one; every later one, "done".
  MessagesApiStandIn api(ws.outside(), nlohmann::json::array({{{"name", "Bash"},
      {"input", {{"command", "echo made-by-tool > tool.txt"}, {"description", "write a file"}}}}}));
  InstallClaudeHooks(ws);
  GuardRun run = ClaudeRun(api, home, "write the file please", "Bash");
  GuardResult g = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(g.new_sessions.size(), 1u);
  BOOST_TEST(ws.Read("tool.txt") == "made-by-tool\n", DescribeResult(g));
  GuardResult show = RunGuardCommand(ws, {"show", "--session", g.new_sessions[0], "--json"});
  BOOST_REQUIRE(show.exit_code == 0);
  std::vector<std::string> order;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] == "mark") order.push_back((e["step"] == true ? "step " : "turn ") + e["label"].get<std::string>());
    else if (e["op"] == "create" && e["outside_root"] == false) order.push_back(e["path"].get<std::string>());
  }
  std::vector<std::string> expected = {"turn prompt: write the file please", "step before Bash", "tool.txt",
                                       "step Bash"};
  BOOST_TEST(order == expected, nlohmann::json(order).dump() << "\n" << DescribeResult(g));

  GuardResult undo = RunGuardCommand(ws, {"undo", "--session", g.new_sessions[0], "--turns", "1", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(!ws.Exists("tool.txt"));
  BOOST_TEST(ws.Read("README") == "a project\n");
}

}  // namespace
}  // namespace guard::e2e
