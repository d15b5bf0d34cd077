#include "supervisor/commands/run_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <CLI/CLI.hpp>

#include "common/shim_interface.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/session_launcher.h"

namespace guard {
namespace {

int Fail(const std::string& msg, int code = kExitGuardError) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return code;
}

// Already inside a guard session: the outer guard captures everything this
// process starts, and a second tracer could not attach anyway.
int ExecDirectly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  return Fail(argv[0] + ": " + std::strerror(errno), errno == ENOENT ? 127 : 126);
}

}  // namespace

int RunCommand::Run() {
  if (options_.argv.empty()) return Fail("no command given (usage: guard [OPTIONS] -- CMD [ARG...])", 2);
  if (const char* outer = getenv(GUARD_ENV_SESSION); outer != nullptr && *outer != '\0') {
    return ExecDirectly(options_.argv);
  }
  // The platform's part (session_launcher.h): on Linux the supervisor runs
  // in a child process (trace/front_process.h), so that this one can return
  // the command's status while the session goes on.
  LaunchOutcome outcome = LaunchSession(options_);
  session_id_ = outcome.session_id;
  return outcome.code;
}

void RunSubcommand::Declare(CLI::App* app, SharedOptions*) {
  app_ = app;
  app->add_option("--root", options_.root,
                  "The tree to protect (default: the git work tree around the current directory, "
                  "else the current directory)");
  quiet_option_ = app->add_flag("-q,--quiet", options_.quiet, "Print nothing of guard's own at the end");
  policy_option_ =
      app->add_option("--on-capture-failure", policy_,
                      "When a pre-image cannot be saved (disk full, I/O error): 'block' makes the "
                      "change fail with ENOSPC or EIO, 'allow' lets it happen unrecorded and notes that")
          ->check(CLI::IsMember({"block", "allow"}));
  mode_option_ = app->add_option(
      "--mode", mode_,
      "How calls are caught: 'auto' (the preload shim for libc callers, ptrace + seccomp for the rest; the "
      "default), 'trace' (ptrace + seccomp alone) 'preload' (the shim alone, where ptrace is not allowed: "
      "blind to static binaries and raw system calls) or 'watch' (no tracer, no shim: changes seen after they "
      "happen, by inotify or FSEvents; on macOS the one mode, and what 'auto' means there; docs/capture.md, "
      "\"Watch mode\"); also GUARD_MODE");
  checkpoint_every_option_ = app->add_option(
      "--checkpoint-every", checkpoint_every_,
      "In a git work tree, commit the session's state to refs/guard/<session-id> this often while it "
      "runs (5m, 30s; 'off': only at its end, which is always written; default: checkpoint_every in "
      "config.toml)")
      ->type_name("DURATION");
  app->add_option("command", options_.argv, "The command to run, after --");
}

const char* RunSubcommand::SessionOptionGiven() const {
  const std::pair<const CLI::Option*, const char*> session_only[] = {
      {quiet_option_, "--quiet"}, {policy_option_, "--on-capture-failure"}, {mode_option_, "--mode"}};
  for (const auto& [option, name] : session_only) {
    if (option->count() > 0) return name;
  }
  return nullptr;
}

std::string RunSubcommand::Override(Settings* settings) const {
  if (policy_option_->count() > 0) settings->on_capture_failure = {policy_, "--on-capture-failure"};
  // GUARD_MODE (the test suite runs in each mode by it) stands between
  // the file and the flag.
  if (const char* env_mode = getenv("GUARD_MODE"); env_mode != nullptr && *env_mode != '\0' && mode_option_->count() == 0) {
    if (std::string why = CheckMode(env_mode); !why.empty()) return "GUARD_MODE: " + why;
    settings->mode = {env_mode, "GUARD_MODE"};
  }
  if (mode_option_->count() > 0) {
    if (std::string why = CheckMode(mode_); !why.empty()) return "--mode: " + why;
    settings->mode = {mode_, "--mode"};
  }
  if (const char* env = getenv("GUARD_HIDE_STATE"); env != nullptr && *env != '\0') {
    if (std::string why = CheckHideState(env); !why.empty()) return "GUARD_HIDE_STATE: " + why;
    settings->hide_state = {env, "GUARD_HIDE_STATE"};
  }
  if (checkpoint_every_option_->count() > 0) {
    int64_t ns = 0;
    if (checkpoint_every_ != "off" && (!ParseDuration(checkpoint_every_, &ns) || ns <= 0)) {
      return "--checkpoint-every: not a duration (5m, 30s, 1h) nor off: " + checkpoint_every_;
    }
    settings->checkpoint_every_ns = {ns, "--checkpoint-every"};
  }
  return "";
}

int RunSubcommand::Run(const Invocation& invocation) {
  if (options_.argv.empty()) {
    std::fputs(app_->help().c_str(), stderr);
    return 2;
  }
  const Settings& settings = *invocation.settings;
  RunCommand::Options run = options_;
  run.on_failure = settings.on_capture_failure.value == "allow" ? CaptureFailurePolicy::kAllow
                                                                : CaptureFailurePolicy::kBlock;
  run.auto_gc = settings.auto_gc.value;
  run.max_bytes = settings.max_size.value;
  run.checkpoint_every_ns = settings.checkpoint_every_ns.value;
  run.sync_every_ns = settings.sync_every_ns.value;
  run.mode = settings.mode.value;
  run.hide_state = settings.hide_state.value;
  return RunCommand(std::move(run)).Run();
}

}  // namespace guard
