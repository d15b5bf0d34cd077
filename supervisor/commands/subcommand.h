// What main.cc's table of subcommands holds, and what each subcommand
// gives it: the subcommand declares its own options on the CLI::App the
// table made for it, and runs from them once the command line is parsed
// and the configuration read. As git's `commands[]` with its cmd_* entry
// points, declared in builtin.h and defined in each command's own file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/base/config.h"

namespace CLI {
class App;
class Option;
class Validator;
}

namespace guard {

// --session's help: of a command that changes a session's tree or commits
// its work, and of a read-only view of one.
inline constexpr const char* kSessionHelp = "ID, unique prefix or hex suffix, last or last~N (default: last of this root)";
inline constexpr const char* kViewSessionHelp =
    "ID, unique prefix or hex suffix, last or last~N (default: last session of this root)";

// What every subcommand's run gets.
struct Invocation {
  // --root, given before or after the subcommand; "": the default.
  std::string root;
  // The settings: config.toml with the flags and the environment over it;
  // nullptr for a subcommand flagged kBeforeConfig.
  const Settings* settings = nullptr;
};

// The options several subcommands share.
class SharedOptions {
 public:
  // Adds --root to `cmd`. It may follow a subcommand that reads the
  // sessions of a root (`guard undo --root DIR`); given before it, it
  // applies to it too.
  void AddRoot(CLI::App* cmd);
  // Adds --session to `cmd`, with `help` (one of the two below). An empty
  // one would silently mean the last session: CheckSessions refuses it.
  CLI::Option* AddSession(CLI::App* cmd, std::string* session, const char* help);

  // The usage error of a parsed command line, or "".
  std::string CheckSessions() const;
  // The root the subcommand applies to, from `session_root` (--root before
  // any subcommand) and the one after it; "" or the usage error.
  std::string MergeRoots(const std::string& session_root, std::string* root) const;

 private:
  std::string sub_root_;
  std::vector<std::pair<CLI::App*, const std::string*>> sessions_;
};

class Subcommand {
 public:
  virtual ~Subcommand() = default;
  // Declares the options on `cmd`, which the table made with the
  // subcommand's name, and binds them to this object.
  virtual void Declare(CLI::App* cmd, SharedOptions* line) = 0;
  // The usage error of `root` with the options given, or "".
  virtual std::string CheckRoot(const std::string& root) const {
    (void)root;
    return "";
  }
  // Returns guard's exit status.
  virtual int Run(const Invocation& invocation) = 0;
};

// A subcommand that runs `Command` (one of *_command.h) with the options
// its Declare bound into options_, the root given on the command line
// theirs: most subcommands are this, and declare their options alone.
template <typename Command>
class CommandSubcommand : public Subcommand {
 public:
  int Run(const Invocation& invocation) override {
    options_.root = invocation.root;
    return Command(options_).Run();
  }

 protected:
  typename Command::Options options_;
};

// guard's exit statuses, one table (the man page's EXIT STATUS in
// packaging/manpage_sections.h2m, and README.md): 0 done; kExitFailed;
// kExitUsage; 125, 126 and 127
// when guard or the command could not start (run_command.h); otherwise the
// status of the command a session ran.
inline constexpr int kExitFailed = 1;  // the command did not do what it was asked
inline constexpr int kExitUsage = 2;   // a usage error: nothing was done

// Prints "guard: MESSAGE" and returns kExitUsage.
int UsageError(const std::string& message);

// --turns N and other counts: a whole number from 1 to `max`, refused in
// words otherwise (CLI11 alone clamps 99999999999999999999 to the type's
// largest value and quotes that).
CLI::Validator CountValidator(uint64_t max);

// The table's flags.
enum CommandFlags : unsigned {
  // Runs before the configuration is read: a hook or a completion must not
  // fail on a broken config file.
  kBeforeConfig = 1u << 0,
  // Takes no --root, not even before the subcommand.
  kNoRoot = 1u << 1,
  // Takes the options of a session (--quiet, --on-capture-failure, --mode),
  // which every other subcommand refuses.
  kSessionOptions = 1u << 2,
  // Removes sessions: waits while config.toml has problems
  // (config_problems.h), as no default retention may prune.
  kDeletes = 1u << 3,
};

struct CommandEntry {
  const char* name;
  std::unique_ptr<Subcommand> (*make)();
  unsigned flags;
};

// The subcommands, each defined in its command's own file.
std::unique_ptr<Subcommand> MakeSessionsSubcommand();
std::unique_ptr<Subcommand> MakeShellInitSubcommand();
std::unique_ptr<Subcommand> MakeUndoSubcommand();
std::unique_ptr<Subcommand> MakeReplaySubcommand();
std::unique_ptr<Subcommand> MakeRedoSubcommand();
std::unique_ptr<Subcommand> MakeInternalRestoreSubcommand();
std::unique_ptr<Subcommand> MakeCheckpointSubcommand();
std::unique_ptr<Subcommand> MakeCommitSubcommand();
std::unique_ptr<Subcommand> MakeStatusSubcommand();
std::unique_ptr<Subcommand> MakeShowSubcommand();
std::unique_ptr<Subcommand> MakeDiffSubcommand();
std::unique_ptr<Subcommand> MakeExportSubcommand();
std::unique_ptr<Subcommand> MakeRecoverSubcommand();
std::unique_ptr<Subcommand> MakeGcSubcommand();
std::unique_ptr<Subcommand> MakeForgetSubcommand();
std::unique_ptr<Subcommand> MakeConfigSubcommand();
std::unique_ptr<Subcommand> MakeMarkSubcommand();
std::unique_ptr<Subcommand> MakeHooksSubcommand();
std::unique_ptr<Subcommand> MakeDoctorSubcommand();
std::unique_ptr<Subcommand> MakeCompleteSubcommand();
std::unique_ptr<Subcommand> MakePromptSubcommand();
std::unique_ptr<Subcommand> MakeHelpSubcommand();

}  // namespace guard
