#include "supervisor/commands/claude_settings.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace guard {
namespace {

using Json = nlohmann::ordered_json;

constexpr char kHookArgs[] = " mark --hook claude";

struct GuardHook {
  const char* event;
  const char* matcher;  // null: the event takes none
};
constexpr GuardHook kGuardHooks[] = {
    {"UserPromptSubmit", nullptr},
    {"PreToolUse", "*"},
    {"PostToolUse", "*"},
};

std::string ShellQuote(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
              c == '.' || c == '_' || c == '-' || c == '+';
    plain = plain && ok;
  }
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The indentation of the first indented line of `text`: what dump() is
// given to write it back the same way.
void DetectIndent(const std::string& text, int* width, char* ch) {
  *width = 2;
  *ch = ' ';
  size_t nl = text.find('\n');
  while (nl != std::string::npos && nl + 1 < text.size()) {
    size_t i = nl + 1, n = 0;
    char c = text[i];
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t') && text[i] == c) ++i, ++n;
    if (n > 0 && i < text.size() && text[i] != '\n') {
      *width = static_cast<int>(n);
      *ch = c;
      return;
    }
    nl = text.find('\n', nl + 1);
  }
}

Status Parse(const std::string& settings, Json* j) {
  bool blank = settings.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank) {
    *j = Json::object();
    return Status::Ok();
  }
  *j = Json::parse(settings, nullptr, /*allow_exceptions=*/false);
  if (j->is_discarded()) return Status::InvalidArgument("not valid JSON");
  if (!j->is_object()) return Status::InvalidArgument("not a JSON object");
  return Status::Ok();
}

std::string Write(const Json& j, const std::string& original) {
  int width = 2;
  char ch = ' ';
  DetectIndent(original, &width, &ch);
  std::string out = j.dump(width, ch, /*ensure_ascii=*/false, Json::error_handler_t::replace);
  bool blank = original.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank || (!original.empty() && original.back() == '\n')) out += '\n';
  return out;
}

bool IsGuardHook(const Json& hook) {
  if (!hook.is_object()) return false;
  auto it = hook.find("command");
  return it != hook.end() && it->is_string() && IsGuardHookCommand(it->get<std::string>());
}

bool EventHasGuardHook(const Json& groups) {
  for (const Json& g : groups) {
    if (!g.is_object() || !g.contains("hooks") || !g["hooks"].is_array()) continue;
    for (const Json& h : g["hooks"]) {
      if (IsGuardHook(h)) return true;
    }
  }
  return false;
}

}  // namespace

std::string ClaudeHookCommand(const std::string& guard_program) { return ShellQuote(guard_program) + kHookArgs; }

bool IsGuardHookCommand(const std::string& command) {
  const std::string args = kHookArgs;
  if (command.size() <= args.size() || command.compare(command.size() - args.size(), args.size(), args) != 0) {
    return false;
  }
  std::string program = command.substr(0, command.size() - args.size());
  if (program.size() >= 2 && program.front() == '\'' && program.back() == '\'') {
    program = program.substr(1, program.size() - 2);
  }
  size_t slash = program.rfind('/');
  return program.substr(slash == std::string::npos ? 0 : slash + 1) == "guard";
}

Status InstallClaudeHooks(const std::string& settings, const std::string& command, std::string* out,
                          bool* changed) {
  Json j;
  GUARD_RETURN_IF_ERROR(Parse(settings, &j));
  if (j.contains("hooks") && !j["hooks"].is_object()) return Status::InvalidArgument("\"hooks\" is not an object");
  bool added = false;
  for (const GuardHook& g : kGuardHooks) {
    Json& hooks = j["hooks"];
    if (hooks.contains(g.event) && !hooks[g.event].is_array()) {
      return Status::InvalidArgument(std::string("\"hooks\".\"") + g.event + "\" is not an array");
    }
    Json& groups = hooks[g.event];
    if (groups.is_null()) groups = Json::array();
    if (EventHasGuardHook(groups)) continue;
    Json group = Json::object();
    if (g.matcher != nullptr) group["matcher"] = g.matcher;
    group["hooks"] = Json::array({Json{{"type", "command"}, {"command", command}}});
    groups.push_back(std::move(group));
    added = true;
  }
  *changed = added;
  *out = added ? Write(j, settings) : settings;
  return Status::Ok();
}

Status UninstallClaudeHooks(const std::string& settings, std::string* out, bool* changed, bool* now_empty) {
  *changed = false;
  *now_empty = false;
  *out = settings;
  Json j;
  GUARD_RETURN_IF_ERROR(Parse(settings, &j));
  if (!j.contains("hooks") || !j["hooks"].is_object()) return Status::Ok();
  Json& hooks = j["hooks"];
  bool removed = false;
  std::vector<std::string> emptied_events;
  for (auto& [event, groups] : hooks.items()) {
    if (!groups.is_array()) continue;
    bool removed_here = false;
    for (size_t gi = groups.size(); gi-- > 0;) {
      Json& group = groups[gi];
      if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) continue;
      Json& list = group["hooks"];
      bool removed_in_group = false;
      for (size_t hi = list.size(); hi-- > 0;) {
        if (IsGuardHook(list[hi])) {
          list.erase(hi);
          removed_in_group = true;
        }
      }
      if (removed_in_group && list.empty()) groups.erase(gi);
      removed_here = removed_here || removed_in_group;
    }
    if (removed_here && groups.empty()) emptied_events.push_back(event);
    removed = removed || removed_here;
  }
  if (!removed) return Status::Ok();
  for (const std::string& e : emptied_events) hooks.erase(e);
  if (hooks.empty() && !emptied_events.empty()) j.erase("hooks");
  *changed = true;
  *now_empty = j.empty();
  *out = Write(j, settings);
  return Status::Ok();
}

}  // namespace guard
