// `guard shell-init bash|zsh|fish [AGENT...]`: prints shell code that makes
// typing an agent's name run it under guard, for `eval "$(guard shell-init bash)"`.
#pragma once

#include <string>
#include <vector>

namespace guard {

class ShellInitCommand {
 public:
  struct Options {
    std::string shell;
    std::vector<std::string> agents;  // empty: the default list
  };
  explicit ShellInitCommand(Options options) : options_(std::move(options)) {}
  int Run();

  // The agents wrapped when none are named.
  static const std::vector<std::string>& DefaultAgents();
  // The script, or "" with *error set.
  static std::string Script(const std::string& shell, const std::vector<std::string>& agents,
                            const std::string& guard_path, std::string* error);

 private:
  Options options_;
};

}  // namespace guard
