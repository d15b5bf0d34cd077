// The real Claude Code driven by a scripted model: a stand-in for the
// Messages API (python3, on 127.0.0.1) answers each request of the agent's
// loop with the next tool call of a script, and copies the tree before it
// answers, so that a test knows the state after every tool call.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

// claude on the PATH, else the one tools/setup.sh installed beside the guard
// binary (<build>/claude-code/claude); empty when there is neither.
std::string FindClaude();
// `name` on the PATH, or empty.
std::string FindOnPath(const std::string& name);

class MessagesApiStandIn {
 public:
  // `tool_calls`: a JSON array of tool_use inputs, each {"name": ..., "input":
  // {...}}; the request that holds N assistant messages gets the Nth, and
  // every request after the last gets the text "done". When `tree` is not
  // empty, the first request that holds N assistant messages first copies
  // `tree` to `<dir>/snapshots/N` (symlinks kept, modes copied); when the
  // Nth call has "wake": {"touch": F, "wait_for": G}, it then makes the
  // empty file F, waits (at most a minute) until G exists, and copies the
  // tree again to `<dir>/snapshots/N.woken`, before it answers: a process
  // the agent left in the background writes between two tool calls. Its log
  // (each request, each tool result) is `<dir>/api.log`. Throws
  // std::runtime_error when the server does not start.
  MessagesApiStandIn(const std::string& dir, const nlohmann::json& tool_calls, const std::string& tree = "");
  ~MessagesApiStandIn();
  MessagesApiStandIn(const MessagesApiStandIn&) = delete;
  MessagesApiStandIn& operator=(const MessagesApiStandIn&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + port_; }
  std::string Snapshot(size_t n) const { return dir_ + "/snapshots/" + std::to_string(n); }
  std::string WokenSnapshot(size_t n) const { return Snapshot(n) + ".woken"; }
  std::string Log() const;

 private:
  std::string dir_, port_;
  std::unique_ptr<ChildProcess> server_;
};

// `guard hooks install claude` for the workspace's tree (its
// .claude/settings.json). Throws std::runtime_error when it fails.
void InstallClaudeHooks(const Workspace& ws);

// `claude -p PROMPT --allowedTools TOOLS` under guard, its model `api`, its
// own state in `home` (never the user's), no update check.
GuardRun ClaudeRun(const MessagesApiStandIn& api, const std::string& home, const std::string& prompt,
                   const std::string& tools);

}  // namespace guard::e2e
