#include "supervisor/commands/plan_json.h"

#include <cstdio>

#include "supervisor/base/json_schema.h"
#include "supervisor/base/path_escape.h"

namespace guard {

namespace {

using Json = nlohmann::ordered_json;

Json StateJson(const FileState& s) {
  Json j;
  j["type"] = FileTypeName(s.type);
  bool exists = s.type != FileType::kAbsent && s.type != FileType::kUnknown;
  char mode[16];
  std::snprintf(mode, sizeof mode, "%04o", s.mode & 07777);
  j["mode"] = exists ? Json(mode) : Json(nullptr);
  j["size"] = exists && s.type == FileType::kRegular ? Json(s.size) : Json(nullptr);
  return j;
}

}  // namespace

Json PlanJson(const char* verb, const std::string& session, const std::string& root, const RestorePlan& plan,
              const GitStateRestore& git) {
  Json j;
  j["schema"] = kJsonSchemaVersion;
  j["command"] = verb;
  j["session"] = session;
  bool lossy = false;
  j["root"] = Utf8OrEscaped(root, &lossy);
  j["count"] = plan.changes.size();
  j["conflicts"] = plan.conflicts();
  Json changes = Json::array();
  for (const RestoreItem& c : plan.changes) {
    Json item;
    item["action"] = DescribeChange(c);
    item["path"] = Utf8OrEscaped(c.path, &lossy);
    if (lossy) item["path_bytes_hex"] = HexBytes(c.path);
    item["current"] = StateJson(c.current);
    item["target"] = StateJson(c.target);
    item["conflict"] = c.conflict;
    item["why"] = c.conflict ? Json(c.why.empty() ? "changed since the session" : c.why) : Json(nullptr);
    changes.push_back(item);
  }
  j["changes"] = changes;
  Json unknown = Json::array(), notes = Json::array();
  for (const std::string& u : plan.unknown) unknown.push_back(Utf8OrEscaped(u, &lossy));
  for (const std::string& n : plan.notes) notes.push_back(Utf8OrEscaped(n, &lossy));
  j["unknown"] = unknown;
  j["notes"] = notes;
  // git's refs and index (git_state_restore.h): what moves, what is left.
  Json git_changes = Json::array(), left = Json::array();
  for (const GitStateRestore::Change& c : git.changes()) {
    git_changes.push_back({{"action", c.action}, {"path", Utf8OrEscaped(c.what, &lossy)}, {"detail", c.detail}});
  }
  for (const std::string& l : plan.git.left) left.push_back(Utf8OrEscaped(l, &lossy));
  for (const std::string& l : git.conflicts()) left.push_back(Utf8OrEscaped(l, &lossy));
  j["git"] = {{"changes", git_changes}, {"left", left}, {"objects_kept", plan.git.objects_kept}};
  return j;
}

}  // namespace guard
