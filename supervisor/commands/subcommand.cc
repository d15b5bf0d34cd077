#include "supervisor/commands/subcommand.h"

#include <CLI/CLI.hpp>
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
  return 2;
}

}  // namespace guard
