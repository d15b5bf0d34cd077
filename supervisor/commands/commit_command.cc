#include "supervisor/commands/commit_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include "supervisor/base/path_args.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/confirm.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/git/commit_intent.h"
#include "supervisor/git/session_commit.h"
#include "supervisor/review/review_options.h"
#include "supervisor/review/review_session.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const CommitCommand::kSummary =
    "Commit the session's end state of the paths it touched on the current branch";

const char* const CommitCommand::kHelp =
    "Makes an ordinary commit on the current branch (HEAD) whose tree is HEAD's plus the state the\n"
    "session left each path it touched in (only the PATHs given, and what lies below them, if any),\n"
    "untracked ones included, nothing inside .git or guard's state directory: none of your other\n"
    "uncommitted or staged changes. Untracked paths git ignores are left out and named, as git add\n"
    "leaves them (--include-ignored commits them); so are paths inside a submodule, whose gitlink\n"
    "follows the submodule's HEAD. Afterwards the index entries of exactly those paths match the\n"
    "commit; other staged changes stay staged, other edits stay in the tree. The branch and the\n"
    "index move together: a commit interrupted by a kill is finished or rolled back by the next one.\n"
    "Lists the paths and asks (without a terminal, --yes is required). Refuses when one of the\n"
    "paths no longer holds what the session left there (changed since): it names the path.\n"
    "The message defaults to a summary of the session (its command and its marks). Works for a\n"
    "session whose guard died (recovered first). Exit status 0 committed (or nothing to commit), 1 refused or\n"
    "failed, 2 usage or no such session.";

namespace {

std::string DefaultMessage(const SessionHistory& history, size_t paths) {
  const SessionMeta& meta = history.meta();
  std::string cmd;
  for (const std::string& a : meta.argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::string message = SessionSummaryLine(meta) + "\n\nThe work of guard session " + meta.id + " (" +
                        std::to_string(paths) + " path" + (paths == 1 ? "" : "s") + ").\nCommand: " + cmd + "\n";
  if (std::string marks = SessionMarksLines(history); !marks.empty()) message += "\n" + marks;
  return message;
}

// What the commit leaves out, and why: ignored paths (as `git add` would),
// paths inside submodules (their own history).
void PrintLeftOut(const SessionCommit& plan) {
  constexpr size_t kListed = 10;
  auto list = [&](const std::vector<std::string>& paths, const char* why) {
    if (paths.empty()) return;
    std::fprintf(stderr, "guard: left out %zu %s:", paths.size(), why);
    for (size_t i = 0; i < paths.size() && i < kListed; ++i) {
      std::fprintf(stderr, " %s", EscapeForTerminal(paths[i]).c_str());
    }
    std::fprintf(stderr, "%s\n", paths.size() > kListed ? " ..." : "");
  };
  list(plan.ignored(), "ignored path(s) (git add would; --include-ignored commits them)");
  list(plan.in_submodule(), "path(s) inside submodules (commit them in the submodule)");
}

}  // namespace

int CommitCommand::Run() {
  if (InsideGuardSession()) {
    std::fprintf(stderr, "guard: not inside a guard session: run guard commit outside it\n");
    return 1;
  }
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0)
    return rc;
  const SessionMeta& meta = session.history.meta();
  std::vector<std::string> only;
  if (!options_.paths.empty()) {
    char cwd[PATH_MAX], real[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr || ::realpath(cwd, real) == nullptr) {
      std::fprintf(stderr, "guard: current directory: %s\n", Status::FromErrno("getcwd", errno).ToString().c_str());
      return 1;
    }
    for (const std::string& arg : options_.paths) {
      std::string rel;
      if (Status s = ToRootRelative(meta.root, real, arg, &rel); !s.ok()) {
        std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.message()).c_str());
        return kExitReviewUsage;
      }
      only.push_back(rel);
    }
  }
  char real[PATH_MAX];
  std::string state_dir = ::realpath(session.state.path().c_str(), real) != nullptr ? real : session.state.path();
  // A commit a kill interrupted is finished or rolled back first
  // (commit_intent.h), so that this one plans on a consistent branch.
  std::vector<std::string> repaired;
  if (Status s = RepairCommits(state_dir, &repaired); !s.ok()) {
    std::fprintf(stderr, "guard: mending an interrupted commit: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  for (const std::string& line : repaired) std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(line).c_str());
  SessionCommit plan;
  Status s = SessionCommit::Plan(session.history, *session.store, state_dir, only, options_.include_ignored, &plan);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: commit of session %s: %s\n", session.id.c_str(),
                 EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  if (plan.unknown() > 0) {
    std::fprintf(stderr, "guard: %zu touched path%s with no recorded end state: left out\n", plan.unknown(),
                 plan.unknown() == 1 ? "" : "s");
  }
  PrintLeftOut(plan);
  if (plan.changes().empty()) {
    std::printf("nothing to commit: HEAD already holds the session's end state of its paths\n");
    return 0;
  }
  std::string branch = plan.target();
  if (branch.rfind("refs/heads/", 0) == 0) branch = branch.substr(11);
  std::printf("guard commit: session %s onto %s:\n", session.id.c_str(), branch.c_str());
  for (const TreeChange& c : plan.changes()) {
    std::printf("  %c %s%s\n", c.kind, EscapeForTerminal(c.path).c_str(), c.was_tree ? "/" : "");
  }
  if (!plan.conflicts().empty()) {
    for (const std::string& c : plan.conflicts()) {
      std::fprintf(stderr, "guard: conflict: %s\n", EscapeForTerminal(c).c_str());
    }
    std::fprintf(stderr, "guard: nothing committed: %zu path%s changed since the session\n",
                 plan.conflicts().size(), plan.conflicts().size() == 1 ? "" : "s");
    return 1;
  }
  if (options_.dry_run) return 0;
  if (!options_.yes) {
    if (::isatty(STDIN_FILENO) != 1) {
      std::fprintf(stderr, "guard: refusing to commit without --yes (no terminal to ask)\n");
      return 2;
    }
    if (!Confirm("Commit these " + std::to_string(plan.changes().size()) + " path(s)?")) {
      std::fprintf(stderr, "guard: nothing committed\n");
      return 1;
    }
  }
  std::string message = options_.message.empty() ? DefaultMessage(session.history, plan.changes().size()) : options_.message;
  std::string commit;
  s = plan.Apply(message, &commit);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: commit: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  std::printf("[%s %.12s] %s\n", branch.c_str(), commit.c_str(),
              EscapeForTerminal(message.substr(0, message.find('\n'))).c_str());
  return 0;
}

// The command line of `guard commit` (subcommand.h).
namespace {

class CommitSubcommand final : public CommandSubcommand<CommitCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(CommitCommand::kSummary)->footer(CommitCommand::kHelp);
    line->AddSession(cmd, &options_.session, kSessionHelp)->type_name("ID");
    cmd->add_option("-m,--message", options_.message, "The commit message (default: a summary of the session)");
    cmd->add_flag("-y,--yes", options_.yes, "Do not ask (required without a terminal)");
    cmd->add_flag("--dry-run", options_.dry_run, "Only show what would be committed");
    cmd->add_flag("--include-ignored", options_.include_ignored,
                  "Also commit untracked paths git ignores (left out by default, as git add does)");
    cmd->add_option("paths", options_.paths, "Only these paths (files or directories)");
    line->AddRoot(cmd);
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeCommitSubcommand() { return std::make_unique<CommitSubcommand>(); }

}  // namespace guard
