#include "supervisor/commands/shell_init_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include "common/os_calls.h"
#include "supervisor/commands/subcommand.h"

namespace guard {
namespace {

bool IsPlainName(const std::string& s) {
  if (s.empty() || s[0] == '-') return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Single-quotes `s` for sh-like shells and fish alike.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string SelfPath() {
  std::string self = os::SelfExePath();
  return self.empty() ? "guard" : self;
}

}  // namespace

const std::vector<std::string>& ShellInitCommand::DefaultAgents() {
  static const std::vector<std::string> kAgents = {"claude", "codex", "gemini", "aider"};
  return kAgents;
}

std::string ShellInitCommand::Script(const std::string& shell, const std::vector<std::string>& agents,
                                     const std::string& guard_path, bool prompt, std::string* error) {
  for (const std::string& a : agents) {
    if (!IsPlainName(a)) {
      *error = "not a command name: " + a;
      return "";
    }
  }
  std::string g = guard_path.find('\'') == std::string::npos ? Quote(guard_path) : "guard";
  std::string out = "# guard shell integration: these agents run under guard (guard sessions lists them).\n";
  if (shell == "bash" || shell == "zsh") {
    for (const std::string& a : agents) {
      // `command guard` would do too; the absolute path keeps working when
      // PATH changes. guard finds the real agent by PATH, never this function.
      out += a + "() { " + g + " -- " + a + " \"$@\"; }\n";
    }
  } else if (shell == "fish") {
    for (const std::string& a : agents) {
      out += "function " + a + " --wraps " + a + " --description 'run " + a + " under guard'\n";
      out += "    " + g + " -- " + a + " $argv\n";
      out += "end\n";
    }
  } else {
    *error = "unknown shell '" + shell + "' (bash, zsh or fish)";
    return "";
  }
  if (!prompt) return out;
  out += "# guard's prompt hook: one line when the last session here needs a look.\n";
  if (shell == "bash") {
    out += "_guard_prompt() { " + g + " __prompt; }\n";
    out += "if [[ \";${PROMPT_COMMAND[*]:-};\" != *\";_guard_prompt;\"* ]]; then\n";
    out += "  PROMPT_COMMAND=\"_guard_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}\"\n";
    out += "fi\n";
  } else if (shell == "zsh") {
    out += "_guard_prompt() { " + g + " __prompt; }\n";
    out += "autoload -Uz add-zsh-hook && add-zsh-hook precmd _guard_prompt\n";
  } else {
    out += "function __guard_prompt --on-event fish_prompt\n";
    out += "    " + g + " __prompt\n";
    out += "end\n";
  }
  return out;
}

int ShellInitCommand::Run() {
  std::string error;
  const std::vector<std::string>& agents = options_.agents.empty() ? DefaultAgents() : options_.agents;
  std::string script = Script(options_.shell, agents, SelfPath(), options_.prompt, &error);
  if (script.empty()) {
    std::fprintf(stderr, "guard: shell-init: %s\n", error.c_str());
    return 2;
  }
  std::fputs(script.c_str(), stdout);
  return 0;
}

// The command line of `guard shell-init` (subcommand.h).
namespace {

class ShellInitSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description("Print shell code that runs coding agents under guard: eval \"$(guard shell-init bash)\"");
    cmd->add_option("shell", options_.shell, "bash, zsh or fish")->required();
    cmd->add_option("agents", options_.agents, "Commands to wrap (default: claude codex gemini aider)");
    cmd->add_flag("--prompt", options_.prompt,
                  "Also a prompt hook: one line when the last session of the directory's root ended abnormally "
                  "or its work left the tree, once a session");
  }
  int Run(const Invocation& invocation) override {
    if (options_.agents.empty()) options_.agents = invocation.settings->agents.value;
    return ShellInitCommand(options_).Run();
  }

 private:
  ShellInitCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeShellInitSubcommand() { return std::make_unique<ShellInitSubcommand>(); }

}  // namespace guard
