// guard: runs a coding agent with every file change it makes saved first.
// This file only parses the command line and hands over to one object per
// subcommand.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/base/config.h"
#include "supervisor/base/version.h"
#include "supervisor/session/recovery.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/commands/commit_command.h"
#include "supervisor/commands/complete_command.h"
#include "supervisor/commands/config_command.h"
#include "supervisor/commands/diff_command.h"
#include "supervisor/commands/export_command.h"
#include "supervisor/commands/forget_command.h"
#include "supervisor/commands/gc_command.h"
#include "supervisor/commands/hooks_command.h"
#include "supervisor/commands/mark_command.h"
#include "supervisor/commands/recover_command.h"
#include "supervisor/commands/restore_command.h"
#include "supervisor/commands/run_command.h"
#include "supervisor/commands/sessions_command.h"
#include "supervisor/commands/shell_init_command.h"
#include "supervisor/commands/show_command.h"
#include "supervisor/commands/status_command.h"

int main(int argc, char** argv) {
  using namespace guard;
  CLI::App app{"guard: runs a command (a coding agent) so that every file change it or any process it "
               "starts makes under the root is saved first and can be undone.\n"
               "  guard [OPTIONS] -- CMD [ARG...]\n"
               "  guard sessions | status | show | diff | export | undo | replay | checkpoint | commit | mark | recover | "
               "gc | forget | config | hooks | shell-init"};
  app.set_version_flag("--version", std::string("guard ") + kGuardVersion + " (commit " + kGuardCommit + ")");

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
  std::string mode;
  CLI::Option* mode_opt = app.add_option(
      "--mode", mode,
      "How calls are caught: 'auto' (the preload shim for libc callers, ptrace + seccomp for the rest; the "
      "default), 'trace' (ptrace + seccomp alone) or 'preload' (the shim alone, where ptrace is not allowed: "
      "blind to static binaries and raw system calls); also GUARD_MODE");
  std::string checkpoint_every;
  CLI::Option* checkpoint_every_opt = app.add_option(
      "--checkpoint-every", checkpoint_every,
      "In a git work tree, commit the session's state to refs/guard/<session-id> this often while it "
      "runs (5m, 30s; 'off': only at its end, which is always written; default: checkpoint_every in "
      "config.toml)")
      ->type_name("DURATION");
  app.add_option("command", run.argv, "The command to run, after --");

  // --root may also follow a subcommand that reads the sessions of a root
  // (`guard undo --root DIR`); given before it, it applies to it too.
  std::string sub_root;
  auto add_root = [&](CLI::App* cmd) {
    cmd->add_option("--root", sub_root,
                    "The root whose sessions to use (default: the nearest root of a recorded session "
                    "around the current directory, else the git work tree, else the current directory)")
        ->type_name("DIR");
  };
  // --session names a session; an empty one would silently mean the last.
  std::vector<std::pair<CLI::App*, const std::string*>> session_options;

  SessionsCommand::Options sessions;
  CLI::App* sessions_cmd = app.add_subcommand("sessions", "List the sessions of this root");
  sessions_cmd->add_flag("--json", sessions.json, "Print a JSON array");
  sessions_cmd->add_flag("--all", sessions.all, "Sessions of every root");
  add_root(sessions_cmd);

  ShellInitCommand::Options shell_init;
  CLI::App* shell_init_cmd = app.add_subcommand(
      "shell-init", "Print shell code that runs coding agents under guard: eval \"$(guard shell-init bash)\"");
  shell_init_cmd->add_option("shell", shell_init.shell, "bash, zsh or fish")->required();
  shell_init_cmd->add_option("agents", shell_init.agents,
                             "Commands to wrap (default: claude codex gemini aider)");

  // undo and replay share their options; __restore is the internal form
  // that applies a restore under the outer guard (see restore_command.h).
  RestoreCommand::Options undo, replay, internal;
  undo.direction = RestoreDirection::kUndo;
  replay.direction = RestoreDirection::kReplay;
  internal.internal = true;
  auto add_restore = [&](const char* name, const char* help, RestoreCommand::Options* o) {
    CLI::App* cmd = app.add_subcommand(name, help);
    cmd->add_option("--session", o->session, "ID, unique prefix, last or last~N (default: last of this root)");
    cmd->add_option("--to", o->to,
                    "Stop at operation SEQ, or at mark MARK: @N (its number as guard show prints it) or its label")
        ->type_name("SEQ|MARK");
    if (o->direction == RestoreDirection::kUndo) {
      cmd->add_option("--turns", o->turns,
                      "Undo the last N marked turns (a turn: from a mark made without --step to the next one, "
                      "or the end)")
          ->type_name("N")
          ->excludes("--to");
    }
    cmd->add_flag("--dry-run", o->dry_run, "Only print what would change");
    cmd->add_flag("-y,--yes", o->yes, "Do not ask (required without a terminal)");
    cmd->add_flag("--force", o->force, "Overwrite paths changed since the session (conflicts)");
    cmd->add_option("paths", o->paths, "Only these paths (files or directories)");
    add_root(cmd);
    session_options.emplace_back(cmd, &o->session);
    return cmd;
  };
  CLI::App* undo_cmd = add_restore(
      "undo",
      "Put every path the session touched back as it was before it (or before operation SEQ, just "
      "after mark MARK, before the last N marked turns). "
      "Prints the changes and asks; paths changed since the session are conflicts and stop it "
      "unless --force. The undo is recorded as a session of its own.",
      &undo);
  CLI::App* replay_cmd = add_restore(
      "replay",
      "Put every path the session touched into the state the session left it in (or just after "
      "operation SEQ or mark MARK): the way back after the session's changes were reverted. Same rules as undo.",
      &replay);
  CLI::App* internal_cmd = app.add_subcommand("__restore", "");
  internal_cmd->group("");
  std::string internal_verb;
  internal_cmd->add_option("verb", internal_verb)->required()->check(CLI::IsMember({"undo", "replay"}));
  internal_cmd->add_option("--session", internal.session);
  internal_cmd->add_option("--to", internal.to);
  internal_cmd->add_flag("--force", internal.force);
  internal_cmd->add_option("paths", internal.paths);

  // Git: checkpoints and commits of a session's work.
  CheckpointCommand::Options checkpoint;
  CLI::App* checkpoint_cmd =
      app.add_subcommand("checkpoint", CheckpointCommand::kSummary)->footer(CheckpointCommand::kHelp);
  checkpoint_cmd->add_option("--session", checkpoint.session, "ID, unique prefix, last or last~N (default: last of this root)")
      ->type_name("ID");
  checkpoint_cmd->add_option("-m,--message", checkpoint.message, "The commit message (default: a summary of the session)");
  checkpoint_cmd->add_option("--at", checkpoint.at, "The state at this mark: @N (as show numbers them) or its label")
      ->type_name("MARK");
  add_root(checkpoint_cmd);
  session_options.emplace_back(checkpoint_cmd, &checkpoint.session);

  CommitCommand::Options commit;
  CLI::App* commit_cmd = app.add_subcommand("commit", CommitCommand::kSummary)->footer(CommitCommand::kHelp);
  commit_cmd->add_option("--session", commit.session, "ID, unique prefix, last or last~N (default: last of this root)")
      ->type_name("ID");
  commit_cmd->add_option("-m,--message", commit.message, "The commit message (default: a summary of the session)");
  commit_cmd->add_flag("-y,--yes", commit.yes, "Do not ask (required without a terminal)");
  commit_cmd->add_flag("--dry-run", commit.dry_run, "Only show what would be committed");
  commit_cmd->add_option("paths", commit.paths, "Only these paths (files or directories)");
  add_root(commit_cmd);
  session_options.emplace_back(commit_cmd, &commit.session);

  // Review commands: read-only views of a recorded session.
  const char* session_help = "ID, unique prefix, last or last~N (default: last session of this root)";
  StatusCommand::Options status;
  CLI::App* status_cmd = app.add_subcommand("status", StatusCommand::kSummary)->footer(StatusCommand::kHelp);
  status_cmd->add_flag("--json", status.json, "Print a JSON object");
  add_root(status_cmd);

  ShowCommand::Options show;
  CLI::App* show_cmd = app.add_subcommand("show", ShowCommand::kSummary)->footer(ShowCommand::kHelp);
  show_cmd->add_option("--session", show.session, session_help)->type_name("ID");
  show_cmd->add_flag("--json", show.json, "Print a JSON array, one object per operation");
  add_root(show_cmd);
  session_options.emplace_back(show_cmd, &show.session);

  DiffCommand::Options diff;
  CLI::App* diff_cmd = app.add_subcommand("diff", DiffCommand::kSummary)->footer(DiffCommand::kHelp);
  diff_cmd->add_option("--session", diff.session, session_help)->type_name("ID");
  diff_cmd->add_option("--to", diff.to,
                       "Compare with the state just after operation SEQ, or at mark MARK: @N (its number as "
                       "guard show prints it) or its label (default: the end)")
      ->type_name("SEQ|MARK");
  diff_cmd->add_option("--color", diff.color,
                       "auto (default: colour when stdout is a terminal and NO_COLOR is unset), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN");
  diff_cmd->add_option("PATH", diff.paths,
                       "Only these paths and what is below them (relative to the current directory)");
  add_root(diff_cmd);
  session_options.emplace_back(diff_cmd, &diff.session);

  ExportCommand::Options export_options;
  CLI::App* export_cmd = app.add_subcommand("export", ExportCommand::kSummary)->footer(ExportCommand::kHelp);
  export_cmd->add_option("--session", export_options.session, session_help)->type_name("ID");
  export_cmd->add_option("--format", export_options.format, "patch (default) or tar")
      ->check(CLI::IsMember({"patch", "tar"}))
      ->type_name("FORMAT");
  export_cmd->add_option("--to", export_options.to,
                         "The state just after operation SEQ, or at mark MARK: @N (its number as guard show "
                         "prints it) or its label (default: the end)")
      ->type_name("SEQ|MARK");
  add_root(export_cmd);
  session_options.emplace_back(export_cmd, &export_options.session);

  CLI::App* recover_cmd = app.add_subcommand(
      "recover",
      "Complete every session whose guard died (killed, crashed, power loss): cut a torn journal "
      "tail, save what was in flight, record the final states, mark it recovered. Every other "
      "command but status (which lists them) does this for its root first.");
  add_root(recover_cmd);

  GcCommand::Options gc;
  CLI::App* gc_cmd = app.add_subcommand("gc", GcCommand::kSummary)->footer(GcCommand::kHelp);
  gc_cmd->add_flag("--dry-run", gc.dry_run, "Only print what would be removed");
  gc_cmd->add_option("--keep", gc.keep, "Remove sessions that ended longer ago than this (default: 30d)")
      ->type_name("DURATION");
  gc_cmd->add_option("--max-size", gc.max_size, "Remove the oldest sessions while the state directory is "
                     "larger than this (default: 10GiB)")
      ->type_name("SIZE");
  gc_cmd->add_option("--keep-newest", gc.keep_newest, "Never remove the newest N sessions of a root (default: 3)")
      ->type_name("N");
  gc_cmd->add_flag("--auto", gc.automatic)->group("");

  ForgetCommand::Options forget;
  CLI::App* forget_cmd = app.add_subcommand("forget", ForgetCommand::kSummary);
  forget_cmd->add_option("sessions", forget.sessions, "IDs, unique prefixes, last or last~N")->required();
  forget_cmd->add_flag("--dry-run", forget.dry_run, "Only print what would be removed");

  CLI::App* config_cmd = app.add_subcommand("config", ConfigCommand::kSummary);

  MarkCommand::Options mark;
  CLI::App* mark_cmd = app.add_subcommand("mark", MarkCommand::kSummary)->footer(MarkCommand::kHelp);
  mark_cmd->add_flag("--step", mark.step, "A point inside a turn: it starts no turn of its own");
  mark_cmd->add_option("--hook", mark.hook, "Run as an agent's hook: claude (reads the hook's JSON on stdin)")
      ->check(CLI::IsMember({"claude"}))
      ->type_name("AGENT");
  mark_cmd->add_option("label", mark.label, "The mark's label (the words are joined by spaces)");

  HooksCommand::Options hooks;
  CLI::App* hooks_cmd = app.add_subcommand("hooks", HooksCommand::kSummary)->footer(HooksCommand::kHelp);
  hooks_cmd->require_subcommand(1);
  std::vector<CLI::App*> hooks_actions;
  bool hooks_project[2] = {false, false};
  for (const char* action : {"install", "uninstall"}) {
    CLI::App* a = hooks_cmd->add_subcommand(
        action, std::string(action == std::string("install") ? "Add guard's hooks to" : "Remove guard's hooks from") +
                    " an agent's settings");
    a->footer(HooksCommand::kHelp);
    a->add_option("agent", hooks.agent, "claude")->required()->check(CLI::IsMember({"claude"}));
    CLI::Option* project = a->add_flag("--project", hooks_project[hooks_actions.size()],
                                       "The project's .claude/settings.json (default)");
    a->add_flag("--user", hooks.user, "~/.claude/settings.json")->excludes(project);
    add_root(a);
    hooks_actions.push_back(a);
  }

  std::string complete_what;
  CLI::App* complete_cmd = app.add_subcommand("__complete", "");
  complete_cmd->group("");
  complete_cmd->add_option("what", complete_what)->required();

  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto usage_error = [](const std::string& msg) {
    std::fprintf(stderr, "guard: %s\n", msg.c_str());
    return 2;
  };
  for (const auto& [cmd, session] : session_options) {
    if (*cmd && cmd->get_option("--session")->count() > 0 && session->empty()) {
      return usage_error("--session needs a session: an id, a unique prefix, last or last~N");
    }
  }
  if (!sub_root.empty() && !run.root.empty() && sub_root != run.root) {
    return usage_error("--root given twice, as " + run.root + " and as " + sub_root);
  }
  // The session options mean nothing to a subcommand: refuse them rather
  // than let `guard --quiet undo` look as if it had been quiet. (`guard
  // config` shows what they would set, so it takes them.)
  if (!app.get_subcommands().empty() && !*config_cmd) {
    for (const char* name : {"--quiet", "--on-capture-failure", "--mode"}) {
      if (app.get_option(name)->count() > 0) {
        return usage_error(std::string(name) + " applies to a session (guard " + name + " ... -- CMD), not to " +
                           app.get_subcommands().front()->get_name());
      }
    }
  }
  std::string root = sub_root.empty() ? run.root : sub_root;
  if (!root.empty() && (*shell_init_cmd || *internal_cmd || *mark_cmd)) {
    return usage_error(std::string("--root does not apply to ") +
                       (*shell_init_cmd ? "shell-init" : *mark_cmd ? "mark" : "__restore"));
  }
  if (!root.empty() && *sessions_cmd && sessions.all) return usage_error("--root and --all exclude each other");
  sessions.root = status.root = show.root = diff.root = export_options.root = undo.root = replay.root = root;
  checkpoint.root = commit.root = root;
  // A session recovered by any command gets its last checkpoint.
  SetRecoveredHook([](const std::string& id) { WriteEndCheckpoint(id, /*quiet=*/false); });
  // The one place the configuration is read: flags given above win over it.
  // A file that cannot be read stops every command, a session first of all.
  Settings settings;
  if (*complete_cmd) return CompleteCommand(complete_what).Run();
  // Before the configuration: a hook must not fail on a broken config file.
  if (*mark_cmd) return MarkCommand(mark).Run();
  if (*hooks_cmd) {
    hooks.install = hooks_actions[0]->parsed();
    hooks.root = root;
    if (hooks.user && !root.empty()) return usage_error("--root does not apply to --user");
    return HooksCommand(hooks).Run();
  }
  if (Status s = LoadConfigFile(ConfigPath(), &settings); !s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.message().c_str());
    return 2;
  }
  if (app.get_option("--on-capture-failure")->count() > 0) settings.on_capture_failure = {policy, "--on-capture-failure"};
  // GUARD_MODE (the test suite runs in each mode by it) stands between
  // the file and the flag.
  if (const char* env_mode = getenv("GUARD_MODE"); env_mode != nullptr && *env_mode != '\0' && mode_opt->count() == 0) {
    if (std::string why = CheckMode(env_mode); !why.empty()) {
      std::fprintf(stderr, "guard: GUARD_MODE: %s\n", why.c_str());
      return 2;
    }
    settings.mode = {env_mode, "GUARD_MODE"};
  }
  if (mode_opt->count() > 0) {
    if (std::string why = CheckMode(mode); !why.empty()) {
      std::fprintf(stderr, "guard: --mode: %s\n", why.c_str());
      return 2;
    }
    settings.mode = {mode, "--mode"};
  }
  if (const char* env = getenv("GUARD_HIDE_STATE"); env != nullptr && *env != '\0') {
    if (std::string why = CheckHideState(env); !why.empty()) {
      std::fprintf(stderr, "guard: GUARD_HIDE_STATE: %s\n", why.c_str());
      return 2;
    }
    settings.hide_state = {env, "GUARD_HIDE_STATE"};
  }
  if (checkpoint_every_opt->count() > 0) {
    int64_t ns = 0;
    if (checkpoint_every != "off" && (!ParseDuration(checkpoint_every, &ns) || ns <= 0)) {
      return usage_error("--checkpoint-every: not a duration (5m, 30s, 1h) nor off: " + checkpoint_every);
    }
    settings.checkpoint_every_ns = {ns, "--checkpoint-every"};
  }
  if (*config_cmd) return ConfigCommand(settings).Run();
  if (*gc_cmd) return GcCommand(gc, settings).Run();
  if (*forget_cmd) return ForgetCommand(forget).Run();
  if (*recover_cmd) return RecoverCommand(root).Run();
  if (*sessions_cmd) return SessionsCommand(sessions).Run();
  status.keep_ns = settings.keep_ns.value;
  status.max_bytes = settings.max_size.value;
  if (*status_cmd) return StatusCommand(status).Run();
  if (*show_cmd) return ShowCommand(show).Run();
  if (*diff_cmd) return DiffCommand(diff).Run();
  if (*export_cmd) return ExportCommand(export_options).Run();
  if (*checkpoint_cmd) return CheckpointCommand(checkpoint).Run();
  if (*commit_cmd) return CommitCommand(commit).Run();
  undo.auto_gc = replay.auto_gc = settings.auto_gc.value;
  if (*undo_cmd) return RestoreCommand(undo).Run();
  if (*replay_cmd) return RestoreCommand(replay).Run();
  if (*internal_cmd) {
    internal.direction = internal_verb == "undo" ? RestoreDirection::kUndo : RestoreDirection::kReplay;
    return RestoreCommand(internal).Run();
  }
  if (*shell_init_cmd) {
    if (shell_init.agents.empty()) shell_init.agents = settings.agents.value;
    return ShellInitCommand(shell_init).Run();
  }
  if (run.argv.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  run.on_failure = settings.on_capture_failure.value == "allow" ? CaptureFailurePolicy::kAllow
                                                                : CaptureFailurePolicy::kBlock;
  run.auto_gc = settings.auto_gc.value;
  run.checkpoint_every_ns = settings.checkpoint_every_ns.value;
  run.sync_every_ns = settings.sync_every_ns.value;
  run.mode = settings.mode.value;
  run.hide_state = settings.hide_state.value;
  return RunCommand(std::move(run)).Run();
}
