// Running guard's own subcommands (`guard undo ...`, `guard replay ...`) in a
// workspace, the way a user types them in the root: GUARD_HOME is the
// workspace's and the working directory is the tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

struct GuardCommand {
  std::vector<std::string> args;           // after the binary: {"undo", "--yes"}
  std::string cwd;                         // empty: the tree
  std::optional<std::string> stdin_data;   // nullopt: /dev/null (not a terminal)
  int timeout_seconds = 60;
};

// new_sessions holds the sessions the command recorded (a restore records one).
GuardResult RunGuardCommand(const Workspace& ws, const GuardCommand& command);
GuardResult RunGuardCommand(const Workspace& ws, const std::vector<std::string>& args);

// "exit N\n  stdout:\n...\n  stderr:\n...", for failure messages.
std::string DescribeResult(const ProcessResult& r);

}  // namespace guard::e2e
