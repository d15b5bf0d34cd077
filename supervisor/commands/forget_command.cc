#include "supervisor/commands/forget_command.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/time_format.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/confirm.h"
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
  if (!options_.dry_run && !options_.yes) {
    if (!isatty(STDIN_FILENO)) {
      std::fprintf(stderr, "guard forget: refusing to remove sessions without --yes (no terminal to ask)\n");
      return 2;
    }
    for (const std::string& id : request.forget) {
      SessionMeta m;
      if (LoadSessionMeta(state.session_dir(id) + "/meta.json", &m).ok()) {
        std::string command;
        for (const std::string& a : m.argv) command += (command.empty() ? "" : " ") + a;
        std::fprintf(stderr, "  %s  %s  %llu ops, %llu files  %s\n", id.c_str(), ShownTime(m.started_ns).c_str(),
                     static_cast<unsigned long long>(m.ops), static_cast<unsigned long long>(m.files),
                     EscapeForTerminal(command).c_str());
      } else {
        std::fprintf(stderr, "  %s\n", id.c_str());
      }
    }
    const size_t n = request.forget.size();
    if (!Confirm("Forget " + std::string(n == 1 ? "this session" : "these " + std::to_string(n) + " sessions") +
                 " and what only " + (n == 1 ? "it holds" : "they hold") + "? Nothing can undo it then.")) {
      std::fprintf(stderr, "guard forget: nothing removed\n");
      return 1;
    }
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
  if (options_.dry_run) {
    PrintGcReport(report, nullptr, options_.dry_run, "forget", stdout);
    return report.skipped.empty() ? 0 : 1;
  }
  for (const std::string& kept : report.skipped) std::printf("guard forget: kept session %s\n", kept.c_str());
  if (!report.removed.empty()) {
    std::string ids;
    for (const std::string& id : report.removed) ids += (ids.empty() ? "" : ", ") + id;
    std::printf("guard forget: removed %s %s; the state directory went from %s to %s\n",
                report.removed.size() == 1 ? "session" : "sessions", ids.c_str(),
                FormatSize(report.plan.total_before).c_str(), FormatSize(report.total_after).c_str());
  }
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
    cmd->add_flag("-y,--yes", options_.yes, "Do not ask (required without a terminal)");
  }
  int Run(const Invocation&) override { return ForgetCommand(options_).Run(); }

 private:
  ForgetCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeForgetSubcommand() { return std::make_unique<ForgetSubcommand>(); }

}  // namespace guard
