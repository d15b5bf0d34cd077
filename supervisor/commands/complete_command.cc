#include "supervisor/commands/complete_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

int CompleteCommand::Run() {
  if (what_ != "sessions") return 2;
  StateDir state;
  std::string root;
  std::vector<std::string> ids;
  if (!StateDir::Open(&state).ok() || !FindRoot("", &root).ok() || !state.ListSessions(&ids).ok()) return 0;
  std::vector<std::string> mine;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    SessionMeta m;
    if (LoadSessionMeta(state.session_dir(*it) + "/meta.json", &m).ok() && m.root == root) mine.push_back(*it);
  }
  for (const std::string& id : mine) std::printf("%s\n", id.c_str());
  for (size_t i = 0; i < mine.size() && i < 10; ++i) {
    if (i == 0) std::printf("last\n");
    else std::printf("last~%zu\n", i);
  }
  return 0;
}

// The command line of `guard __complete` (subcommand.h).
namespace {

// Hidden: for the shell completions alone.
class CompleteSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->group("");
    cmd->add_option("what", what_)->required();
  }
  int Run(const Invocation&) override { return CompleteCommand(what_).Run(); }

 private:
  std::string what_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeCompleteSubcommand() { return std::make_unique<CompleteSubcommand>(); }

}  // namespace guard
