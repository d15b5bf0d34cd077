// guard: runs a coding agent with every file change it makes saved first.
// This file is the table of subcommands and the dispatch to them; each
// declares and runs from its own options (supervisor/commands/subcommand.h).
// Without a subcommand, guard's own options make a session (RunSubcommand).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "supervisor/base/config.h"
#include "supervisor/base/version.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/checkpoint_command.h"
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
    {"gc", MakeGcSubcommand, 0},
    {"forget", MakeForgetSubcommand, 0},
    {"config", MakeConfigSubcommand, kSessionOptions},  // shows what they would set
    {"mark", MakeMarkSubcommand, kBeforeConfig | kNoRoot},
    {"hooks", MakeHooksSubcommand, kBeforeConfig},
    {"__complete", MakeCompleteSubcommand, kBeforeConfig},  // hidden: complete_command.h
};

// The entry of subcommand `name`, or nullptr. Unknown words (a command to
// run, for now) and `help` are for a later change to look up here.
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
  _exit(2);
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
  CLI::App app{"guard: runs a command (a coding agent) so that every file change it or any process it "
               "starts makes under the root is saved first and can be undone.\n"
               "  guard [OPTIONS] -- CMD [ARG...]\n"
               "  guard sessions | status | show | diff | export | undo | replay | redo | checkpoint | commit | mark | recover | "
               "gc | forget | config | hooks | shell-init"};
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
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
  // A file that cannot be read stops every command, a session first of all.
  Settings settings;
  if (Status s = LoadConfigFile(ConfigPath(), &settings); !s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.message().c_str());
    return 2;
  }
  if (std::string error = run.Override(&settings); !error.empty()) return UsageError(error);
  return sub->Run({root, &settings});
}

}  // namespace
}  // namespace guard
