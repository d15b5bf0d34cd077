// guard: runs a coding agent with every file change it makes saved first.
// This file is the table of subcommands and the dispatch to them; each
// declares and runs from its own options (supervisor/commands/subcommand.h).
// Without a subcommand, guard's own options make a session (RunSubcommand).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "supervisor/base/config.h"
#include "supervisor/base/version.h"
#include "supervisor/commands/git_kept_content.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/commands/command_words.h"
#include "supervisor/commands/config_problems.h"
#include "supervisor/commands/help_format.h"
#include "supervisor/commands/run_command.h"
#include "supervisor/commands/subcommand.h"

namespace guard {
namespace {

// In the order guard --help lists them.
const CommandEntry kCommands[] = {
    {"sessions", MakeSessionsSubcommand, 0},
    {"shell-init", MakeShellInitSubcommand, kNoRoot},
    {"undo", MakeUndoSubcommand, 0},
    {"replay", MakeReplaySubcommand, 0},
    {"redo", MakeRedoSubcommand, 0},
    {"__restore", MakeInternalRestoreSubcommand, kNoRoot},  // hidden: restore_command.h
    {"checkpoint", MakeCheckpointSubcommand, 0},
    {"commit", MakeCommitSubcommand, 0},
    {"status", MakeStatusSubcommand, 0},
    {"show", MakeShowSubcommand, 0},
    {"diff", MakeDiffSubcommand, 0},
    {"export", MakeExportSubcommand, 0},
    {"recover", MakeRecoverSubcommand, 0},
    {"gc", MakeGcSubcommand, kDeletes},
    {"forget", MakeForgetSubcommand, kDeletes},
    {"config", MakeConfigSubcommand, kSessionOptions},  // shows what they would set
    {"mark", MakeMarkSubcommand, kBeforeConfig | kNoRoot},
    {"hooks", MakeHooksSubcommand, kBeforeConfig},
    {"doctor", MakeDoctorSubcommand, kBeforeConfig | kNoRoot},
    {"__complete", MakeCompleteSubcommand, kBeforeConfig},  // hidden: complete_command.h
    {"__prompt", MakePromptSubcommand, kBeforeConfig},      // hidden: prompt_command.h
    {"help", MakeHelpSubcommand, kBeforeConfig | kNoRoot},
};

// The entry of subcommand `name`, or nullptr. A word that names none is
// refused before parsing (command_words.h).
const CommandEntry* FindCommand(const std::string& name) {
  for (const CommandEntry& entry : kCommands) {
    if (name == entry.name) return &entry;
  }
  return nullptr;
}

// The usage error of a parsed command line whose subcommand is `entry`
// (nullptr: a session), or "".
std::string CheckUsage(const SharedOptions& line, const RunSubcommand& run, const CommandEntry* entry,
                       const Subcommand* sub, std::string* root) {
  if (std::string error = line.CheckSessions(); !error.empty()) return error;
  if (std::string error = line.MergeRoots(run.root(), root); !error.empty()) return error;
  if (entry == nullptr) return "";
  // The session options mean nothing to a subcommand: refuse them rather
  // than let `guard --quiet undo` look as if it had been quiet.
  if (const char* option = run.SessionOptionGiven(); option != nullptr && !(entry->flags & kSessionOptions)) {
    return std::string(option) + " applies to a session (guard " + option + " ... -- CMD), not to " + entry->name;
  }
  if (!root->empty() && (entry->flags & kNoRoot)) return std::string("--root does not apply to ") + entry->name;
  return sub->CheckRoot(*root);
}

// The last resort: anything thrown that no command caught (a library's
// exception, an allocation that failed) is one line on stderr and exit 2,
// never an abort with a core dump. What a session had captured is in its
// journal already; the next command recovers the session.
[[noreturn]] void Terminate() {
  const char* what = "an unknown exception";
  std::string text;
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      text = ex.what();
      what = text.c_str();
    } catch (...) {
    }
  } else {
    what = "std::terminate";
  }
  std::fprintf(stderr, "guard: internal error: %s\n", what);
  std::fflush(stderr);
  _exit(kExitFailed);
}

// A command line CLI11 refused, as one line starting with "guard:" (CLI11's
// own is two, without it) and the status of a usage error; help and
// --version are CLI11's to print.
int ParseFailure(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  std::string message = e.what();
  if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  std::string help = "guard --help";
  if (!app.get_subcommands().empty()) {
    const std::string& name = app.get_subcommands().front()->get_name();
    message = name + ": " + message;
    help = "guard help " + name;
  }
  return UsageError(message + " (see '" + help + "')");
}

int Main(int argc, char** argv);

}  // namespace
}  // namespace guard

int main(int argc, char** argv) {
  std::set_terminate(guard::Terminate);
  try {
    return guard::Main(argc, argv);
  } catch (...) {
    guard::Terminate();
  }
}

namespace guard {
namespace {

int Main(int argc, char** argv) {
  InstallKeptContentOpener();
  // Named "guard" whatever argv[0] is, so that usage lines say guard.
  CLI::App app{"guard: runs a command (a coding agent) so that every file change it or any process it "
               "starts makes under the root is saved first and can be undone.\n"
               "  guard [OPTIONS] -- CMD [ARG...]\n"
               "  guard sessions | status | show | diff | export | undo | replay | redo | checkpoint | commit | mark | recover | "
               "gc | forget | config | hooks | shell-init | help",
               "guard"};
  app.formatter(std::make_shared<WrappingFormatter>());
  app.set_version_flag("--version", std::string("guard ") + kGuardVersion + " (commit " + kGuardCommit + ")");
  SharedOptions line;
  RunSubcommand run;
  run.Declare(&app, &line);
  std::vector<std::unique_ptr<Subcommand>> subs;
  for (const CommandEntry& entry : kCommands) {
    subs.push_back(entry.make());
    subs.back()->Declare(app.add_subcommand(entry.name), &line);
  }
  app.require_subcommand(0, 1);
  // A command runs after `--` alone: any other word that is not a
  // subcommand is refused here, before anything runs or is recorded.
  if (std::string word = FirstWord(app, argc, argv); !word.empty() && FindCommand(word) == nullptr) {
    return UsageError(NotACommand(word, CommandNames(app)));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ParseFailure(app, e);
  }
  const CommandEntry* entry = nullptr;
  Subcommand* sub = &run;
  if (!app.get_subcommands().empty()) {
    entry = FindCommand(app.get_subcommands().front()->get_name());
    sub = subs[entry - kCommands].get();
  }
  std::string root;
  if (std::string error = CheckUsage(line, run, entry, sub, &root); !error.empty()) return UsageError(error);
  // A session recovered by any command gets its last checkpoint.
  SetRecoveredHook([](const std::string& id) { WriteEndCheckpoint(id, /*quiet=*/false); });
  if (entry != nullptr && (entry->flags & kBeforeConfig)) return sub->Run({root, nullptr});
  // The one place the configuration is read: flags given above win over it.
  // A problem in the file is a warning, or a refusal where a default could
  // do what the user's setting would not (config_problems.h).
  Settings settings;
  (void)LoadConfigFile(ConfigPath(), &settings);  // its problems are in settings.problems
  ConfigUse use = entry == nullptr                 ? ConfigUse::kSession
                  : (entry->flags & kDeletes) != 0 ? ConfigUse::kDeletes
                                                   : ConfigUse::kOther;
  if (int status = CheckConfigProblems(use, &settings); status >= 0) return status;
  if (std::string error = run.Override(&settings); !error.empty()) return UsageError(error);
  return sub->Run({root, &settings});
}

}  // namespace
}  // namespace guard
