#include "supervisor/commands/export_command.h"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/file_io.h"
#include "supervisor/review/change_patch.h"
#include "supervisor/review/change_trees.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/progress.h"
#include "supervisor/review/review_options.h"
#include "supervisor/review/review_session.h"
#include "supervisor/base/scratch_dir.h"
#include "supervisor/review/session_changes.h"
#include "supervisor/base/tool_process.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const ExportCommand::kSummary =
    "Write a session's changes to stdout, as a patch or a tar archive";

const char* const ExportCommand::kHelp =
    "The changes from the state before the session to its end, or to just after operation --to\n"
    "SEQ, or to mark --to MARK (@N, the mark's number as `guard show` prints it, or its label: what\n"
    "the session changed up to that mark), for the paths the session touched up to then.\n"
    "--format patch (the default): a patch with git\n"
    "headers that `git apply` applies to the tree as it was before the session: content,\n"
    "creations, deletions, renames, symlinks, the execute bit, and binary files as git binary\n"
    "patches; never coloured. Empty directories, other mode bits, fifos and device nodes, and\n"
    "paths inside .git cannot be written in a patch and are left out (fifos and device nodes\n"
    "reported on stderr, and the repository's own files, hooks and config, when the session changed\n"
    "them; git's objects, refs and index never: commits are in the repository). --format tar: a tar archive (GNU format) of every touched path that exists at that\n"
    "moment, with names relative to the root: files with content, mode and mtime, symlinks,\n"
    "directories (without their untouched content); fifos and device nodes are left out. A path\n"
    "whose state or content is unknown (not recorded, saved copy missing or damaged) is left out\n"
    "with a message on stderr and the exit status is 1. Exit status 2: no such session or mark.\n"
    "--pending KEY: the bytes of a pre-image the session kept without a record that names it (`guard\n"
    "show` lists them with their size, time and KEY, the content hash), written to stdout as they are;\n"
    "exit status 2 when the session kept none with that KEY.";

namespace {

// The paths for `tar --null --files-from`, in parents-first order.
Status WriteNameList(const std::vector<std::string>& paths, const std::string& file) {
  std::string list;
  for (const std::string& p : paths) {
    list += p;
    list += '\0';
  }
  return WriteFileAtomic(file, list, 0600);
}

}  // namespace

int ExportCommand::ResolveTo(const SessionHistory& history, uint64_t* to_seq, std::string* label) const {
  Status s = ResolveReviewTo(history, options_.to, to_seq, label);
  if (s.ok()) return 0;
  std::fprintf(stderr, "guard: %s\n", s.message().c_str());
  return kExitReviewUsage;
}

int ExportCommand::Run() {
  if (!options_.pending.empty()) return WritePending();
  if (options_.format == "patch") return WritePatch();
  if (options_.format == "tar") return WriteTar();
  std::fprintf(stderr, "guard: --format must be patch or tar\n");
  return kExitReviewUsage;
}

int ExportCommand::WritePatch() {
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0) return rc;
  uint64_t to_seq = kSessionEnd;
  std::string label;
  if (int rc = ResolveTo(session.history, &to_seq, &label); rc != 0) return rc;
  SessionChanges changes = SessionChanges::Collect(session.history, to_seq, {});
  ScratchDir scratch;
  ChangePatch patch;
  Progress progress("guard export");
  Status s = scratch.Create("guard-export");
  if (s.ok())
    s = ChangePatch::Prepare(changes, session.store.get(), scratch.path(), label,
                             &patch, [&](size_t done, size_t total) { progress.Update("files", done, total); });
  progress.Done();
  GitTreeDiff::Style style;
  style.color = false;
  style.binary = true;
  if (s.ok()) s = patch.Write(style, STDOUT_FILENO);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  for (const std::string& line : patch.trees().skipped())
    std::fprintf(stderr, "guard: not exported: %s\n", line.c_str());
  // git's bookkeeping (objects, refs, the index, reflogs) is no part of a
  // patch, and the commits it records are in the repository already: said
  // only when the user's own files in .git (hooks, config) are left out.
  if (const std::vector<std::string>& users = patch.trees().git_dir_users(); !users.empty()) {
    std::string names;
    for (size_t i = 0; i < users.size() && i < 3; ++i) names += (i ? ", " : "") + EscapeForTerminal(users[i]);
    if (users.size() > 3) names += " and " + std::to_string(users.size() - 3) + " more";
    std::fprintf(stderr, "guard: not in the patch: the session's changes to %s (a patch cannot carry a "
                         "repository's own files; --format tar has them)\n", names.c_str());
  }
  for (const std::string& line : patch.trees().unknown()) {
    std::fprintf(stderr, "guard: content unknown, not exported: %s\n", line.c_str());
  }
  return patch.trees().unknown().empty() ? 0 : kExitReviewIncomplete;
}

int ExportCommand::WriteTar() {
  if (::isatty(STDOUT_FILENO) == 1) {
    std::fprintf(stderr, "guard: not writing a tar archive to a terminal: redirect stdout to a file or a pipe\n");
    return 1;
  }
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0) return rc;
  uint64_t to_seq = kSessionEnd;
  std::string label;
  if (int rc = ResolveTo(session.history, &to_seq, &label); rc != 0) return rc;
  SessionChanges changes = SessionChanges::Collect(session.history, to_seq, {});
  ScratchDir scratch;
  ChangeTrees trees;
  ChangeTrees::Options options;
  options.before = false;
  options.after_label = label;
  Progress progress("guard export");
  options.progress = [&](size_t done, size_t total) { progress.Update("files", done, total); };
  Status s = scratch.Create("guard-export");
  if (s.ok())
    s = ChangeTrees::Build(changes, session.store.get(), scratch.path() + "/trees", options, &trees);
  progress.Done();
  std::string list = scratch.path() + "/names";
  if (s.ok()) s = WriteNameList(trees.after_paths(), list);
  if (s.ok()) {
    ToolRun run;
    run.argv = {"tar",
                "--create",
                "--file=-",
                "--format=gnu",
                "--numeric-owner",
                "--no-recursion",
                "--null",
                "--verbatim-files-from",
                "--directory",
                trees.after_dir(),
                "--files-from",
                list};
    const char* path = std::getenv("PATH");
    run.env = {std::string("PATH=") + (path != nullptr && *path ? path : "/usr/local/bin:/usr/bin:/bin"),
               "LC_ALL=C"};
    run.stdout_fd = STDOUT_FILENO;
    s = RunTool(run, nullptr);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  for (const std::string& line : trees.skipped())
    std::fprintf(stderr, "guard: not exported: %s\n", line.c_str());
  for (const std::string& line : trees.unknown()) {
    std::fprintf(stderr, "guard: content unknown, not exported: %s\n", line.c_str());
  }
  return trees.unknown().empty() ? 0 : kExitReviewIncomplete;
}

int ExportCommand::WritePending() {
  BlobKey key;
  if (!BlobKey::FromHex(options_.pending, &key)) {
    std::fprintf(stderr, "guard: --pending wants a content hash as `guard show` prints it (32 hex digits)\n");
    return kExitReviewUsage;
  }
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0) return rc;
  // Only the session's own: the store is shared by every session.
  bool kept = false;
  for (const Record& r : session.history.unnamed_pre_images()) kept = kept || r.key == key;
  if (!kept) {
    std::fprintf(stderr, "guard: session %s kept no pre-image %s without a record (`guard show` lists them)\n",
                 session.id.c_str(), options_.pending.c_str());
    return kExitReviewUsage;
  }
  uint64_t size = 0;
  if (Status s = session.store->ReadTo(BlobRef{BlobRef::Kind::kKey, key, {}}, STDOUT_FILENO, &size); !s.ok()) {
    std::fprintf(stderr, "guard: pre-image %s: %s\n", options_.pending.c_str(), EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  return 0;
}

// The command line of `guard export` (subcommand.h).
namespace {

class ExportSubcommand final : public CommandSubcommand<ExportCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(ExportCommand::kSummary)->footer(ExportCommand::kHelp);
    line->AddSession(cmd, &options_.session, kViewSessionHelp)->type_name("ID");
    cmd->add_option("--format", options_.format, "patch (default) or tar")
        ->check(CLI::IsMember({"patch", "tar"}))
        ->type_name("FORMAT");
    cmd->add_option("--to", options_.to,
                    "The state just after operation SEQ, or at mark MARK: @N (its number as guard show "
                    "prints it) or its label (default: the end)")
        ->type_name("SEQ|MARK");
    cmd->add_option("--pending", options_.pending,
                    "The bytes of a pre-image the session kept without a record (its KEY as guard show prints it)")
        ->type_name("KEY");
    line->AddRoot(cmd);
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeExportSubcommand() { return std::make_unique<ExportSubcommand>(); }

}  // namespace guard
