#include "supervisor/base/time_format.h"
#include "common/os_calls.h"
#include "supervisor/commands/reconnect_summary.h"

#include <signal.h>
#include <string.h>

#include <cstdio>

#include "supervisor/commands/work_in_tree.h"
#include "supervisor/base/path_escape.h"

namespace guard {
namespace {

std::string HowItEnded(const SessionMeta& m) {
  switch (m.state) {
    case SessionState::kKilled:
    case SessionState::kCrashed: {
      std::string sig = m.signal > 0 ? std::string("SIG") + os::SignalAbbrev(m.signal) : "a signal";
      return std::string(m.state == SessionState::kKilled ? "the command was killed by " : "the command crashed with ") + sig;
    }
    case SessionState::kRecovered:
      return "guard itself was stopped mid-session (the session was recovered)";
    case SessionState::kRunning:
      return "guard itself was stopped mid-session (not recovered yet: `guard recover`)";
    default:
      return SessionStateName(m.state);
  }
}

std::string Duration(int64_t ns) {
  int64_t s = ns / 1000000000;
  char buf[64];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  return buf;
}

// "a, b, c, ... (+N more)" of the first `max` paths.
std::string FirstPaths(const std::vector<std::string>& paths, size_t max = 5) {
  std::string out;
  for (size_t i = 0; i < paths.size() && i < max; ++i) out += (i ? ", " : "") + EscapeForTerminal(paths[i]);
  if (paths.size() > max) out += ", ... (+" + std::to_string(paths.size() - max) + " more)";
  return out;
}

std::string Plural(size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace

bool EndedAbnormally(const SessionMeta& meta) {
  return meta.state == SessionState::kKilled || meta.state == SessionState::kCrashed ||
         meta.state == SessionState::kRecovered;
}

std::string ReconnectSummary(const SessionHistory& history, bool only_if_work_gone) {
  const SessionMeta& m = history.meta();
  std::string command;
  for (const std::string& a : m.argv) command += (command.empty() ? "" : " ") + EscapeForTerminal(a);
  if (command.size() > 100) command = command.substr(0, 97) + "...";
  std::vector<std::string> changed = history.ChangedPaths();
  WorkInTree now = CompareTreeWithEnd(history, changed);
  if (only_if_work_gone && now.differ.empty()) return "";
  std::string out = "guard: the previous session in " + EscapeForTerminal(m.root);
  if (EndedAbnormally(m) || m.state == SessionState::kRunning) {
    out += " ended abnormally: " + HowItEnded(m) + ".\n";
  } else {
    out += " ended normally (" + HowItEnded(m) + (m.exit_code >= 0 ? ", exit " + std::to_string(m.exit_code) : "") +
           "), and its work is not in the tree now.\n";
  }
  out += "guard:   session " + m.id + ", started " + ShownTime(m.started_ns);
  if (m.ended_ns > m.started_ns) out += ", ran " + Duration(m.ended_ns - m.started_ns);
  out += ": " + command + "\n";
  out += "guard:   " + std::to_string(changed.size()) + " file" + (changed.size() == 1 ? "" : "s") + " changed";
  for (size_t i = 0; i < changed.size() && i < 5; ++i) out += (i ? ", " : ": ") + EscapeForTerminal(changed[i]);
  if (changed.size() > 5) out += ", ... (+" + std::to_string(changed.size() - 5) + " more)";
  out += "\n";
  // Where the work is now: in the tree, or only in guard's log (the tree was
  // reverted, or changed after the session ended).
  std::vector<std::string> after_end, not_saved;
  for (const auto& [path, flags] : history.final_flags()) {
    if (flags & kChangedAfterEnd) after_end.push_back(path);
    if (flags & kEndNotSaved) not_saved.push_back(path);
  }
  if (!after_end.empty()) {
    out += "guard:   " + Plural(after_end.size(), "path was", "paths were") +
           " changed after the session ended; the session's end is its saved work: " + FirstPaths(after_end) + "\n";
  }
  if (!not_saved.empty()) {
    out += "guard:   " + Plural(not_saved.size(), "path was", "paths were") +
           " changed after the session ended before guard had saved its last work (the end recorded is the "
           "tree's): " + FirstPaths(not_saved) + "\n";
  }
  if (now.compared > 0 && now.differ.empty()) {
    out += "guard:   the session's work is in the tree now.\n";
  } else if (!now.differ.empty()) {
    out += "guard:   the session's work is NOT in the tree now: " + std::to_string(now.differ.size()) + " of " +
           std::to_string(now.compared) + " changed path" + (now.compared == 1 ? "" : "s") +
           " differ from the session's end (reverted or changed since): " + FirstPaths(now.differ) +
           "; `guard replay --session " + m.id + "` brings the work back\n";
  }
  out += "guard:   review:   guard diff --session " + m.id + "\n";
  out += "guard:   re-apply: guard replay --session " + m.id + "\n";
  out += "guard:   commit:   guard commit --session " + m.id + "\n";
  out += "guard:   revert:   guard undo --session " + m.id + "\n";
  return out;
}

}  // namespace guard
