// Small helpers the durability tests share on top of guard_command.h:
// running a guard subcommand under a deadline (a hang is a failure, not a
// stuck suite), reading `guard sessions --json`, and splitting output into
// lines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

// `guard ARGS...` in ws.tree() with stdin /dev/null, killed after
// `timeout_seconds` (then timed_out is set).
GuardResult RunGuardWithin(const Workspace& ws, const std::vector<std::string>& args, int timeout_seconds);

// `guard sessions --json`, parsed; throws std::runtime_error when guard fails
// or prints something other than a JSON array.
nlohmann::json SessionsJson(const Workspace& ws);
// The "state" of session `id` in `guard sessions --json`, "" if not listed.
std::string SessionStateOf(const Workspace& ws, const std::string& id);

// Asserts that `guard undo --yes --session ID` of the one session `r`
// recorded exits 0 and gives back `before` byte for byte.
void UndoGivesBack(const Workspace& ws, const GuardResult& r, const TreeSnapshot& before, int timeout_seconds);

// The lines of `text`, without their newlines.
std::vector<std::string> Lines(const std::string& text);

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace guard::e2e
