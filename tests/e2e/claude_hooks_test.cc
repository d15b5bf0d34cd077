// guard hooks with the real Claude Code (npm install -g
// @anthropic-ai/claude-code), when it is installed: skipped otherwise.
// Without network the model never answers, but `claude -p PROMPT` runs the
// UserPromptSubmit hook before it gives up, so this checks, end to end,
// that the installed hook makes a mark labelled with the prompt's first
// words in the guard session claude runs in, and that uninstalling leaves
// the project as it was. (PostToolUse needs the model to call a tool: not
// testable offline; its input is tested in mark_test.)
#define BOOST_TEST_MODULE claude_hooks
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string FindClaude() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/claude";
    start = end + 1;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

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

}  // namespace
}  // namespace guard::e2e
