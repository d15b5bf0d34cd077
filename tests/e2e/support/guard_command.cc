#include "tests/e2e/support/guard_command.h"

#include <algorithm>

namespace guard::e2e {

GuardResult RunGuardCommand(const Workspace& ws, const GuardCommand& command) {
  ProcessSpec spec;
  spec.argv = {GuardBinary()};
  spec.argv.insert(spec.argv.end(), command.args.begin(), command.args.end());
  spec.cwd = command.cwd.empty() ? ws.tree() : command.cwd;
  spec.env = GuardEnv(ws);
  spec.stdin_data = command.stdin_data;
  spec.timeout_seconds = command.timeout_seconds;
  std::vector<std::string> before = ws.SessionIds();
  GuardResult result;
  static_cast<ProcessResult&>(result) = RunProcess(spec);
  for (const std::string& id : ws.SessionIds()) {
    if (!std::binary_search(before.begin(), before.end(), id)) result.new_sessions.push_back(id);
  }
  return result;
}

GuardResult RunGuardCommand(const Workspace& ws, const std::vector<std::string>& args) {
  GuardCommand command;
  command.args = args;
  return RunGuardCommand(ws, command);
}

std::string DescribeResult(const ProcessResult& r) {
  std::string out = "exit " + std::to_string(r.exit_code) + (r.timed_out ? " (timed out)" : "");
  out += "\n  stdout:\n" + r.out + "  stderr:\n" + r.err;
  return out;
}

}  // namespace guard::e2e
