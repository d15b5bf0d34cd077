#include "supervisor/commands/config_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const ConfigCommand::kSummary =
    "Print the effective settings and where each comes from (flag, config.toml line, default)";

int ConfigCommand::Run() {
  if (settings_.path.empty()) {
    std::printf("# no configuration file: neither XDG_CONFIG_HOME nor HOME is set\n");
  } else {
    std::printf("# %s%s\n", settings_.path.c_str(), settings_.file_found ? "" : " (absent: built-in defaults)");
  }
  std::fputs(DescribeSettings(settings_).c_str(), stdout);
  return 0;
}

// The command line of `guard config` (subcommand.h).
namespace {

class ConfigSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override { cmd->description(ConfigCommand::kSummary); }
  int Run(const Invocation& invocation) override { return ConfigCommand(*invocation.settings).Run(); }
};

}  // namespace

std::unique_ptr<Subcommand> MakeConfigSubcommand() { return std::make_unique<ConfigSubcommand>(); }

}  // namespace guard
