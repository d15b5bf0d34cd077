// `guard undo --dry-run --json` and `guard replay --dry-run --json`: the
// plan as one JSON object (docs/json.md, "plan").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "supervisor/git/git_state_restore.h"
#include "supervisor/restore/restore.h"

namespace guard {

nlohmann::ordered_json PlanJson(const char* verb, const std::string& session, const std::string& root,
                                const RestorePlan& plan, const GitStateRestore& git);

}  // namespace guard
