// guard: runs a coding agent with every file change it makes saved first.
// This file only parses the command line and hands over to one object per
// subcommand.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "supervisor/run_command.h"
#include "supervisor/sessions_command.h"
#include "supervisor/shell_init_command.h"

int main(int argc, char** argv) {
  using namespace guard;
  CLI::App app{"guard: runs a command (a coding agent) so that every file change it or any process it "
               "starts makes under the root is saved first and can be undone.\n"
               "  guard [OPTIONS] -- CMD [ARG...]\n"
               "  guard sessions | shell-init"};
  app.set_version_flag("--version", "guard 0.1.0");

  RunCommand::Options run;
  std::string policy = "block";
  app.add_option("--root", run.root,
                 "The tree to protect (default: the git work tree around the current directory, "
                 "else the current directory)");
  app.add_flag("-q,--quiet", run.quiet, "Print nothing of guard's own at the end");
  app.add_option("--on-capture-failure", policy,
                 "When a pre-image cannot be saved (disk full, I/O error): 'block' makes the "
                 "change fail with ENOSPC or EIO, 'allow' lets it happen unrecorded and notes that")
      ->check(CLI::IsMember({"block", "allow"}));
  app.add_option("command", run.argv, "The command to run, after --");

  SessionsCommand::Options sessions;
  CLI::App* sessions_cmd = app.add_subcommand("sessions", "List the sessions of this root");
  sessions_cmd->add_flag("--json", sessions.json, "Print a JSON array");
  sessions_cmd->add_flag("--all", sessions.all, "Sessions of every root");

  ShellInitCommand::Options shell_init;
  CLI::App* shell_init_cmd = app.add_subcommand(
      "shell-init", "Print shell code that runs coding agents under guard: eval \"$(guard shell-init bash)\"");
  shell_init_cmd->add_option("shell", shell_init.shell, "bash, zsh or fish")->required();
  shell_init_cmd->add_option("agents", shell_init.agents,
                             "Commands to wrap (default: claude codex gemini aider)");

  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*sessions_cmd) return SessionsCommand(sessions).Run();
  if (*shell_init_cmd) return ShellInitCommand(shell_init).Run();
  if (run.argv.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  run.on_failure = policy == "allow" ? CaptureFailurePolicy::kAllow : CaptureFailurePolicy::kBlock;
  return RunCommand(std::move(run)).Run();
}
