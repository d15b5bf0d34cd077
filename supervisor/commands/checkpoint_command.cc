#include "supervisor/commands/checkpoint_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>

#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/session_logger.h"
#include "supervisor/session/recovery.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/review/review_options.h"
#include "supervisor/review/review_session.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const CheckpointCommand::kSummary =
    "Commit the session's current state to refs/guard/<session-id> in the git repository around its root";

const char* const CheckpointCommand::kHelp =
    "Writes a commit of the state the session left each path it touched in (the work guard saved,\n"
    "so it works for a running session, an ended one, and one whose guard died) onto the ref\n"
    "refs/guard/<session-id>. Its parent is the session's previous checkpoint, the first one's the\n"
    "commit HEAD named when the session started; its tree is the parent's plus the touched paths,\n"
    "untracked and ignored ones included, never anything inside .git or guard's state directory.\n"
    "HEAD, the index, branches, the stash, the configuration and the work tree are left as they are.\n"
    "Then: git log refs/guard/ID, git diff HEAD refs/guard/ID, git checkout refs/guard/ID -- PATH,\n"
    "git push REMOTE 'refs/guard/*'. guard writes one at the end of every session in a git work tree\n"
    "(and every DURATION with guard --checkpoint-every DURATION -- CMD); undo leaves them alone.\n"
    "--at MARK (@N as guard show numbers marks, or a mark's label) commits the state at that mark.\n"
    "The message defaults to the session's command and its marks.\n"
    "Exit status 0 (also when nothing changed since the last checkpoint: no commit is made),\n"
    "1 on failure or outside a git work tree, 2 when no session or no such mark matches.";

int CheckpointCommand::Run() {
  if (InsideGuardSession()) {
    // Its writes into .git would be recorded as the session's own changes,
    // and `guard undo` of the session would remove them again.
    std::fprintf(stderr,
                 "guard: not inside a guard session: the checkpoint's writes would become part of the "
                 "session (use guard --checkpoint-every, or run it outside)\n");
    return 1;
  }
  ReviewSession session;
  if (int rc = ReviewSession::Open(options_.session, options_.root, /*with_store=*/true, &session); rc != 0)
    return rc;
  CheckpointResult result;
  Status s = CheckpointSession(session.state, session.id, kSessionEnd, options_.message, &result, options_.at);
  if (!s.ok() && s.code() == Status::Code::kInvalidArgument && !options_.at.empty()) {
    std::fprintf(stderr, "guard: --at: %s\n", EscapeForTerminal(s.message()).c_str());
    return 2;
  }
  if (!s.ok()) {
    std::fprintf(stderr, "guard: checkpoint of session %s: %s\n", session.id.c_str(),
                 EscapeForTerminal(s.ToString()).c_str());
    return 1;
  }
  std::string ref = CheckpointRef(session.id);
  if (result.no_repository) {
    std::fprintf(stderr, "guard: the root %s of session %s is not in a git work tree\n",
                 EscapeForTerminal(session.history.meta().root).c_str(), session.id.c_str());
    return 1;
  }
  if (!result.written) {
    std::printf("%s: nothing changed since %s\n", ref.c_str(),
                result.commit.empty() ? "HEAD at the session's start" : result.commit.c_str());
  } else {
    std::printf("%s: %s (%zu path%s changed)\n", ref.c_str(), result.commit.c_str(), result.paths,
                result.paths == 1 ? "" : "s");
  }
  if (result.unknown > 0) {
    std::fprintf(stderr, "guard: %zu touched path%s not saved yet: left as in the parent\n", result.unknown,
                 result.unknown == 1 ? "" : "s");
  }
  if (result.in_submodule > 0) {
    std::fprintf(stderr, "guard: %zu touched path%s inside submodules: left to the submodule's own history\n",
                 result.in_submodule, result.in_submodule == 1 ? "" : "s");
  }
  return 0;
}

void WriteEndCheckpoint(const std::string& id, bool quiet) {
  StateDir state;
  if (!StateDir::Open(&state).ok()) return;
  SessionMeta meta;
  if (!LoadSessionMeta(state.session_dir(id) + "/meta.json", &meta).ok()) return;
  if (!TakesAutomaticCheckpoints(meta)) return;
  // Outside a git work tree there is nothing to write: the session's
  // history is not loaded at all (in the supervisor, at the end of a session
  // of 100,000 paths, it would be its largest allocation by far).
  char real[PATH_MAX];
  std::string state_dir = ::realpath(state.path().c_str(), real) != nullptr ? real : state.path();
  if (!InGitWorkTree(meta.root, state_dir)) return;
  CheckpointResult result;
  Status s = CheckpointSession(state, id, kSessionEnd, "", &result);
  if (s.ok()) return;  // written, unchanged, or not in a git work tree
  // In the session's log whatever -q says, and noted for `guard status`
  // (CheckpointSession did) beside the terminal's line.
  MakeSessionLogger(state.session_dir(id), id)
      ->error("end checkpoint failed twice: {} (guard checkpoint --session {} tries again)", s.ToString(), id);
  if (!quiet) {
    std::fprintf(stderr, "guard: checkpoint of session %s failed: %s\n", id.c_str(),
                 EscapeForTerminal(s.ToString()).c_str());
  }
}

// The command line of `guard checkpoint` (subcommand.h).
namespace {

class CheckpointSubcommand final : public CommandSubcommand<CheckpointCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(CheckpointCommand::kSummary)->footer(CheckpointCommand::kHelp);
    line->AddSession(cmd, &options_.session, kSessionHelp)->type_name("ID");
    cmd->add_option("-m,--message", options_.message, "The commit message (default: a summary of the session)");
    cmd->add_option("--at", options_.at, "The state at this mark: @N (as show numbers them) or its label")
        ->type_name("MARK");
    line->AddRoot(cmd);
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeCheckpointSubcommand() { return std::make_unique<CheckpointSubcommand>(); }

}  // namespace guard
