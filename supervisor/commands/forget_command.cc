#include "supervisor/commands/forget_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/state_dir.h"
#include "supervisor/base/progress.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/session/deferred_seal.h"
#include "supervisor/session/garbage_collector.h"
#include "supervisor/commands/gc_command.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const ForgetCommand::kSummary =
    "Remove the given sessions and the blobs no other session needs (not a running one)";

int ForgetCommand::Run() {
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard forget: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string root;
  (void)FindRoot("", &root).ok();  // only `last` needs it; SelectSession says so
  // A session whose seal is under way is forgotten once sealed (deferred_seal.h).
  WaitForSeals(state, "", SealWait{});
  GcRequest request;
  request.dry_run = options_.dry_run;
  for (const std::string& spec : options_.sessions) {
    std::string id;
    s = SelectSession(state, spec, root, &id);
    if (!s.ok()) {
      std::fprintf(stderr, "guard forget: %s\n", s.message().c_str());
      return 2;
    }
    request.forget.push_back(id);
  }
  Progress progress("guard forget");
  request.waiting = [] { std::fprintf(stderr, "guard forget: waiting for a restore or another gc to finish\n"); };
  request.progress = [&](const char* phase, size_t done, size_t total) { progress.Update(phase, done, total); };
  GcReport report;
  s = CollectGarbage(state, request, &report);
  progress.Done();
  if (!s.ok()) {
    std::fprintf(stderr, "guard forget: %s\n", s.ToString().c_str());
    return 1;
  }
  PrintGcReport(report, nullptr, options_.dry_run, "forget", stdout);
  return report.skipped.empty() ? 0 : 1;
}

// The command line of `guard forget` (subcommand.h).
namespace {

class ForgetSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description(ForgetCommand::kSummary);
    cmd->add_option("sessions", options_.sessions, "IDs, unique prefixes, last or last~N")->required();
    cmd->add_flag("--dry-run", options_.dry_run, "Only print what would be removed");
  }
  int Run(const Invocation&) override { return ForgetCommand(options_).Run(); }

 private:
  ForgetCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeForgetSubcommand() { return std::make_unique<ForgetSubcommand>(); }

}  // namespace guard
