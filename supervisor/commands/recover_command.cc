#include "supervisor/commands/recover_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/state_dir.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

int RecoverCommand::Run() {
  if (InsideGuardSession()) {
    std::fprintf(stderr, "guard: recover cannot run inside a guard session\n");
    return 1;
  }
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string root;
  if (!root_.empty()) {
    s = ResolveRecordedRoot(root_, &root);
    if (!s.ok()) {
      std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
      return 2;
    }
  }
  std::vector<RecoveryReport> reports;
  s = RecoverOrphans(state, root, &reports);
  for (const RecoveryReport& r : reports) PrintRecoveryReport(r);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
    return 1;
  }
  if (reports.empty()) std::fprintf(stderr, "guard: no session needs recovery\n");
  return 0;
}

// The command line of `guard recover` (subcommand.h).
namespace {

class RecoverSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(
        "Complete every session whose guard died (killed, crashed, power loss): cut a torn journal "
        "tail, save what was in flight, record the final states, mark it recovered. Every other "
        "command but status (which lists them) does this for its root first.");
    line->AddRoot(cmd);
  }
  int Run(const Invocation& invocation) override { return RecoverCommand(invocation.root).Run(); }
};

}  // namespace

std::unique_ptr<Subcommand> MakeRecoverSubcommand() { return std::make_unique<RecoverSubcommand>(); }

}  // namespace guard
