// `guard hooks install claude [--project|--user]` and `guard hooks
// uninstall claude [--project|--user]`: guard's hooks in Claude Code's
// settings (the project's .claude/settings.json, the default, or the
// user's ~/.claude/settings.json), which run `guard mark --hook claude` at
// every user prompt and after every tool call (claude_settings.h), so that
// `guard undo --turns 1` undoes the agent's last turn. Run outside a
// session: it changes the user's settings, not the tree's history.
#pragma once

#include <string>

namespace guard {

class HooksCommand {
 public:
  struct Options {
    bool install = true;
    std::string agent;  // "claude"
    bool user = false;  // --user, else --project
    std::string root;   // --root: the project (default: as for a session)
  };
  static const char* const kSummary;
  static const char* const kHelp;
  explicit HooksCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
