#include "supervisor/commands/hooks_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/commands/claude_settings.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const HooksCommand::kSummary =
    "Add guard's hooks to an agent's settings, or remove them: guard hooks install|uninstall claude";

const char* const HooksCommand::kHelp =
    "install claude: adds to Claude Code's settings a UserPromptSubmit hook and PreToolUse and\n"
    "PostToolUse hooks (every tool) that run `guard mark --hook claude`: under guard, each prompt\n"
    "starts a marked turn labelled with its first words, and each tool call is framed by a step\n"
    "`before TOOL` and a step labelled with the tool's name, so that `guard undo --turns 1` undoes\n"
    "the agent's last turn, including what its Bash commands did, and `guard undo --to @N` stops\n"
    "exactly before or after one tool call. Outside a guard session the hook does nothing and exits 0.\n"
    "--project (default): .claude/settings.json at the project's root (--root, else the git work\n"
    "tree around the current directory, else the current directory); --user: ~/.claude/settings.json.\n"
    "Other settings and hooks are kept as they are, in their order; installing twice changes\n"
    "nothing. uninstall claude removes exactly the hooks guard added (told by their command) and\n"
    "what that left empty, and the file if nothing else was in it.";

namespace {

int Error(const std::string& msg) {
  std::fprintf(stderr, "guard: hooks: %s\n", msg.c_str());
  return 1;
}

std::string SelfExe() {
  std::string self = os::SelfExePath();
  return self.empty() ? "guard" : self;
}

// `guard` when the `guard` found on PATH is this very program (a command
// that still works after guard is upgraded or moved along PATH), else this
// program's absolute path.
std::string GuardProgram() {
  std::string self = SelfExe();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = dir + "/guard";
    char real[PATH_MAX];
    if (access(candidate.c_str(), X_OK) == 0 && realpath(candidate.c_str(), real) != nullptr) {
      return std::string(real) == self ? "guard" : self;
    }
  }
  return self;
}

Status SettingsPath(const HooksCommand::Options& o, std::string* out) {
  if (o.user) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home != '/') return Status::InvalidArgument("--user: $HOME is not set to an absolute path");
    *out = std::string(home) + "/.claude/settings.json";
    return Status::Ok();
  }
  std::string root;
  GUARD_RETURN_IF_ERROR(FindRoot(o.root, &root));
  *out = root + "/.claude/settings.json";
  return Status::Ok();
}

}  // namespace

int HooksCommand::Run() {
  if (options_.agent != "claude") return Error("unknown agent " + options_.agent + " (known: claude)");
  std::string path;
  if (Status s = SettingsPath(options_, &path); !s.ok()) return Error(s.ToString());
  // A settings file that is a symlink (dotfiles) is edited where it points.
  char real[PATH_MAX];
  std::string file = realpath(path.c_str(), real) != nullptr ? std::string(real) : path;
  std::string before;
  struct stat st;
  bool exists = ::stat(file.c_str(), &st) == 0;
  if (exists) {
    if (!S_ISREG(st.st_mode)) return Error(EscapeForTerminal(file) + " is not a regular file");
    if (Status s = ReadFileToString(file, &before); !s.ok()) return Error(s.ToString());
  } else if (errno != ENOENT) {
    return Error(EscapeForTerminal(file) + ": " + std::strerror(errno));
  }
  std::string after;
  bool changed = false, now_empty = false;
  Status s = options_.install ? InstallClaudeHooks(before, ClaudeHookCommand(GuardProgram()), &after, &changed)
                              : UninstallClaudeHooks(before, &after, &changed, &now_empty);
  if (!s.ok()) return Error(EscapeForTerminal(file) + ": " + s.message() + "; left as it is");
  const std::string shown = EscapeForTerminal(file);
  if (!changed) {
    std::printf("guard hooks: %s: %s\n", shown.c_str(),
                options_.install ? "guard's hooks are already installed" : "no hooks of guard's to remove");
    return 0;
  }
  if (now_empty) {
    if (::unlink(file.c_str()) != 0) return Error(shown + ": " + std::strerror(errno));
    std::printf("guard hooks: removed guard's hooks; %s held nothing else and was removed\n", shown.c_str());
    return 0;
  }
  if (!exists) {
    if (Status made = MakeDirs(ParentDir(file), 0755); !made.ok()) return Error(made.ToString());
  }
  mode_t mode = exists ? (st.st_mode & 07777) : 0644;
  if (Status w = WriteFileAtomic(file, after, mode); !w.ok()) return Error(w.ToString());
  std::printf("guard hooks: %s guard's hooks %s %s\n", options_.install ? "added" : "removed",
              options_.install ? "to" : "from", shown.c_str());
  return 0;
}

// The command line of `guard hooks` (subcommand.h).
namespace {

// `guard hooks install|uninstall AGENT`: one App per action.
class HooksSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(HooksCommand::kSummary)->footer(HooksCommand::kHelp);
    cmd->require_subcommand(1);
    for (int i = 0; i < 2; ++i) {
      const bool install = i == 0;
      CLI::App* a = cmd->add_subcommand(
          install ? "install" : "uninstall",
          std::string(install ? "Add guard's hooks to" : "Remove guard's hooks from") + " an agent's settings");
      a->footer(HooksCommand::kHelp);
      a->add_option("agent", options_.agent, "claude")->required()->check(CLI::IsMember({"claude"}));
      CLI::Option* project = a->add_flag("--project", project_[i], "The project's .claude/settings.json (default)");
      a->add_flag("--user", options_.user, "~/.claude/settings.json")->excludes(project);
      line->AddRoot(a);
      actions_[i] = a;
    }
  }
  std::string CheckRoot(const std::string& root) const override {
    return options_.user && !root.empty() ? "--root does not apply to --user" : "";
  }
  int Run(const Invocation& invocation) override {
    options_.install = actions_[0]->parsed();
    options_.root = invocation.root;
    return HooksCommand(options_).Run();
  }

 private:
  HooksCommand::Options options_;
  bool project_[2] = {false, false};  // the default; only for --user to exclude
  CLI::App* actions_[2] = {nullptr, nullptr};
};

}  // namespace

std::unique_ptr<Subcommand> MakeHooksSubcommand() { return std::make_unique<HooksSubcommand>(); }

}  // namespace guard
