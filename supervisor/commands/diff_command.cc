#include "supervisor/commands/diff_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "supervisor/review/change_patch.h"
#include "supervisor/base/pager.h"
#include "supervisor/base/path_args.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/review/review_session.h"
#include "supervisor/base/scratch_dir.h"
#include "supervisor/review/session_changes.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const DiffCommand::kSummary =
    "Show what a session changed, as a unified diff with git headers";

const char* const DiffCommand::kHelp =
    "Compares the state before the session with its end, or with the state just after operation\n"
    "--to SEQ, or with the state at mark --to MARK (@N, the mark's number, or its label: what the\n"
    "session changed up to that mark; `guard show` lists operations and marks), for the paths the\n"
    "session touched up to then only, restricted to the PATHs given (relative to the current\n"
    "directory). Creations, deletions, renames (same or\n"
    "similar content, as `git diff -M` finds them), symlinks and changes of the execute bit\n"
    "appear as git shows them; binary files are named, not printed; paths with unusual bytes are\n"
    "quoted as git quotes them. What a diff cannot show comes first, as lines starting with '# ':\n"
    "directories created or removed, other mode changes, fifos and device nodes, and the number\n"
    "of paths inside .git directories left out. Colour: --color=auto (the default) colours only\n"
    "when stdout is a terminal and NO_COLOR is unset. A path whose state or content is unknown\n"
    "(not recorded, saved copy missing or damaged) is left out with a message on stderr and the\n"
    "exit status is 1. Exit status 2: no such session or mark, or a PATH outside the root.\n"
    "--stat and --name-only print what git diff --stat and --name-only print instead of the patch.\n"
    "On a terminal the output goes through a pager: GUARD_PAGER, then PAGER, then `less -FRX`\n"
    "(GUARD_PAGER=cat or --no-pager: none).";

namespace {

std::string Mode(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

// Lines for the changes a git diff does not show.
std::vector<std::string> UnshownChanges(const SessionChanges& changes, size_t git_dir_paths) {
  std::vector<std::string> lines;
  for (const PathChange& c : changes.paths()) {
    if (!c.before_known || !c.after_known) continue;
    const FileState& b = c.before;
    const FileState& a = c.after;
    std::string p = QuoteLikeGit(c.path);
    bool was_dir = b.type == FileType::kDirectory, is_dir = a.type == FileType::kDirectory;
    if (is_dir && !was_dir) lines.push_back("new directory: " + p + " (mode " + Mode(a.mode) + ")");
    if (was_dir && !is_dir) lines.push_back("removed directory: " + p);
    if (was_dir && is_dir && b.mode != a.mode) {
      lines.push_back("directory mode changed: " + p + " " + Mode(b.mode) + " -> " + Mode(a.mode));
    }
    // git keeps only the owner's execute bit of a file.
    if (b.type == FileType::kRegular && a.type == FileType::kRegular && b.mode != a.mode &&
        (b.mode & 0100) == (a.mode & 0100)) {
      lines.push_back("mode changed: " + p + " " + Mode(b.mode) + " -> " + Mode(a.mode));
    }
    bool was_special = b.type == FileType::kOther, is_special = a.type == FileType::kOther;
    if (was_special && !is_special) lines.push_back("removed fifo, socket or device node: " + p);
    if (is_special && !was_special) lines.push_back("new fifo, socket or device node: " + p);
    if (is_special && was_special && b.mode != a.mode) {
      lines.push_back("mode changed: " + p + " " + Mode(b.mode) + " -> " + Mode(a.mode));
    }
  }
  if (git_dir_paths > 0) {
    lines.push_back(std::to_string(git_dir_paths) + " path(s) inside .git directories not shown");
  }
  return lines;
}

}  // namespace

int DiffCommand::Run() {
  ColorWhen when;
  if (!ParseColorWhen(options_.color, &when)) {
    std::fprintf(stderr, "guard: --color must be auto, always or never\n");
    return kExitReviewUsage;
  }
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0) return rc;
  const std::string& root = session.history.meta().root;
  uint64_t to_seq = kSessionEnd;
  std::string label;
  if (Status s = ResolveReviewTo(session.history, options_.to, &to_seq, &label); !s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.message().c_str());
    return kExitReviewUsage;
  }

  std::vector<std::string> only;
  if (!options_.paths.empty()) {
    char cwd[PATH_MAX];
    char real[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr || ::realpath(cwd, real) == nullptr) {
      std::fprintf(stderr, "guard: current directory: %s\n",
                   Status::FromErrno("getcwd", errno).ToString().c_str());
      return 1;
    }
    for (const std::string& arg : options_.paths) {
      std::string rel;
      Status s = ToRootRelative(root, real, arg, &rel);
      if (!s.ok()) {
        std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.message()).c_str());
        return kExitReviewUsage;
      }
      only.push_back(rel);
    }
  }

  SessionChanges changes = SessionChanges::Collect(session.history, to_seq, only);
  ScratchDir scratch;
  ChangePatch patch;
  Status s = scratch.Create("guard-diff");
  if (s.ok()) s = ChangePatch::Prepare(changes, session.store.get(), scratch.path(), label, &patch);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }

  bool color = UseColor(when, STDOUT_FILENO);
  Pager pager;
  pager.Start(!options_.no_pager);
  for (const std::string& line : UnshownChanges(changes, patch.trees().git_dir_paths())) {
    if (color)
      std::printf("\033[1m# %s\033[m\n", line.c_str());
    else
      std::printf("# %s\n", line.c_str());
  }
  std::fflush(stdout);
  GitTreeDiff::Style style;
  style.color = color;
  if (options_.stat) style.format = GitTreeDiff::Style::Format::kStat;
  if (options_.name_only) style.format = GitTreeDiff::Style::Format::kNameOnly;
  s = patch.Write(style, STDOUT_FILENO);
  pager.Finish();
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  for (const std::string& line : patch.trees().unknown()) {
    std::fprintf(stderr, "guard: content unknown, not shown: %s\n", line.c_str());
  }
  return patch.trees().unknown().empty() ? 0 : kExitReviewIncomplete;
}

// The command line of `guard diff` (subcommand.h).
namespace {

class DiffSubcommand final : public CommandSubcommand<DiffCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(DiffCommand::kSummary)->footer(DiffCommand::kHelp);
    line->AddSession(cmd, &options_.session, kViewSessionHelp)->type_name("ID");
    cmd->add_option("--to", options_.to,
                    "Compare with the state just after operation SEQ, or at mark MARK: @N (its number as "
                    "guard show prints it) or its label (default: the end)")
        ->type_name("SEQ|MARK");
    cmd->add_option("--color", options_.color,
                    "auto (default: colour when stdout is a terminal and NO_COLOR is unset), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->type_name("WHEN");
    cmd->add_flag("--stat", options_.stat, "Print per-file counts of changed lines instead of the patch");
    cmd->add_flag("--name-only", options_.name_only, "Print the changed paths alone")->excludes("--stat");
    cmd->add_flag("--no-pager", options_.no_pager, "Do not page the output on a terminal");
    cmd->add_option("PATH", options_.paths,
                    "Only these paths and what is below them (relative to the current directory)");
    line->AddRoot(cmd);
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeDiffSubcommand() { return std::make_unique<DiffSubcommand>(); }

}  // namespace guard
