// `guard help [COMMAND]`: guard's help, or a subcommand's, on stdout; as
// `git help`, it never runs the command it is about.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "supervisor/commands/command_words.h"
#include "supervisor/commands/subcommand.h"

namespace guard {
namespace {

class HelpSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd_ = cmd;
    cmd->description("Print guard's help, or a subcommand's (guard help undo)");
    cmd->add_option("command", topic_, "The subcommand to explain")->type_name("COMMAND");
  }
  int Run(const Invocation&) override {
    const CLI::App* guard = cmd_->get_parent();
    if (topic_.empty()) {
      // guard->help() would be help's own: it is the subcommand parsed.
      std::fputs(guard->get_formatter()->make_help(guard, guard->get_name(), CLI::AppFormatMode::Normal).c_str(),
                 stdout);
      return 0;
    }
    std::vector<std::string> names = CommandNames(*guard);
    for (const std::string& name : names) {
      if (name == topic_) {
        std::fputs(guard->get_subcommand(name)->help(guard->get_name()).c_str(), stdout);
        return 0;
      }
    }
    return UsageError(NotACommand(topic_, names));
  }

 private:
  CLI::App* cmd_ = nullptr;
  std::string topic_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeHelpSubcommand() { return std::make_unique<HelpSubcommand>(); }

}  // namespace guard
