#include "supervisor/commands/subcommand.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

namespace guard {

void SharedOptions::AddRoot(CLI::App* cmd) {
  cmd->add_option("--root", sub_root_,
                  "The root whose sessions to use (default: the nearest root of a recorded session "
                  "around the current directory, else the git work tree, else the current directory)")
      ->type_name("DIR");
}

CLI::Option* SharedOptions::AddSession(CLI::App* cmd, std::string* session, const char* help) {
  sessions_.emplace_back(cmd, session);
  return cmd->add_option("--session", *session, help);
}

std::string SharedOptions::CheckSessions() const {
  for (const auto& [cmd, session] : sessions_) {
    if (*cmd && cmd->get_option("--session")->count() > 0 && session->empty()) {
      return "--session needs a session: an id, a unique prefix, last or last~N";
    }
  }
  return "";
}

std::string SharedOptions::MergeRoots(const std::string& session_root, std::string* root) const {
  if (!sub_root_.empty() && !session_root.empty() && sub_root_ != session_root) {
    return "--root given twice, as " + session_root + " and as " + sub_root_;
  }
  *root = sub_root_.empty() ? session_root : sub_root_;
  return "";
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "guard: %s\n", message.c_str());
  return kExitUsage;
}

CLI::Validator CountValidator(uint64_t max) {
  std::string range = "a whole number from 1 to " + std::to_string(max);
  return CLI::Validator(
      [max, range](std::string& value) -> std::string {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) {
          return "'" + value + "' is not " + range;
        }
        size_t digits = value.size() - std::min(value.find_first_not_of('0'), value.size());
        if (digits == 0 || digits > 19 || std::stoull(value) > max) {
          return "'" + value + "' is out of range: " + range;
        }
        return "";
      },
      "N");
}

}  // namespace guard
