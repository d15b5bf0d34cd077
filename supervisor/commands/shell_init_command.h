// `guard shell-init bash|zsh|fish [AGENT...]`: prints shell code that makes
// typing an agent's name run it under guard, for `eval "$(guard shell-init bash)"`;
// with --prompt, also a prompt hook that says once when the last session of
// the directory's root needs a look.
#pragma once

#include <string>
#include <vector>

namespace guard {

class ShellInitCommand {
 public:
  struct Options {
    std::string shell;
    std::vector<std::string> agents;  // empty: the default list
    bool prompt = false;               // --prompt: the prompt hook too (prompt_command.h)
  };
  explicit ShellInitCommand(Options options) : options_(std::move(options)) {}
  int Run();

  // The agents wrapped when none are named.
  static const std::vector<std::string>& DefaultAgents();
  // The script, or "" with *error set. With `prompt`, a hook that runs
  // `guard __prompt` before each prompt (bash PROMPT_COMMAND, zsh precmd,
  // fish fish_prompt), once however often the script is evaluated.
  static std::string Script(const std::string& shell, const std::vector<std::string>& agents,
                            const std::string& guard_path, bool prompt, std::string* error);

 private:
  Options options_;
};

}  // namespace guard
