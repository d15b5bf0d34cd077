#include "supervisor/commands/restore_command.h"

#include <CLI/CLI.hpp>
#include <limits.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "common/blob_store.h"
#include "common/os_calls.h"
#include "common/session_history.h"
#include "common/state_dir.h"
#include "common/path_util.h"
#include "supervisor/session/garbage_collector.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/auto_gc.h"
#include "supervisor/commands/confirm.h"
#include "supervisor/commands/plan_json.h"
#include "supervisor/base/progress.h"
#include "supervisor/base/path_args.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/commands/run_command.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/restore/chained_request.h"
#include "supervisor/restore/restore_chain.h"
#include "supervisor/restore/restore_interrupt.h"
#include "supervisor/restore/restore_kill_point.h"
#include "supervisor/restore/restore_names.h"
#include "supervisor/restore/overlapping_sessions.h"
#include "supervisor/restore/restore_session.h"
#include "supervisor/commands/subcommand.h"
#include "supervisor/git/git_state_restore.h"

namespace guard {
namespace {

const char* Verb(RestoreDirection d) { return d == RestoreDirection::kUndo ? "undo" : "replay"; }

int Error(const std::string& msg, int code) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return code;
}

// Maps PATH arguments (relative to the current directory) to root-relative paths.
Status RootRelative(const std::string& root, const std::vector<std::string>& args,
                    std::vector<std::string>* out) {
  std::string cwd;
  bool removed;
  if (!args.empty()) GUARD_RETURN_IF_ERROR(CurrentDirectory(&cwd, &removed));
  for (const std::string& a : args) {
    std::string rel;
    // An empty argument names the current directory.
    GUARD_RETURN_IF_ERROR(ToRootRelative(root, cwd, a.empty() ? "." : a, &rel));
    out->push_back(std::move(rel));
  }
  return Status::Ok();
}

// The PATH arguments (as given) that name no path the session touched,
// under any name it had (restore_names.h), nor a directory above one.
std::vector<std::string> Untouched(const SessionHistory& history, const std::vector<std::string>& args,
                                   const std::vector<std::string>& rel) {
  std::set<std::string> names = RestoreNames(history);
  std::vector<std::string> out;
  for (size_t i = 0; i < rel.size(); ++i) {
    bool touched = false;
    for (const std::string& n : names) touched = touched || PathIsUnder(n, rel[i]);
    if (!touched) out.push_back(args[i]);
  }
  return out;
}

std::string SelfExe() {
  std::string self = os::SelfExePath();
  return self.empty() ? "guard" : self;
}

// 6000 -> "6,000", as the interrupted message counts paths.
std::string Count(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The rows of the terminal on stdout, or 0 when stdout is no terminal.
int TerminalRows() {
  if (isatty(STDOUT_FILENO) != 1) return 0;
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 24;
}

void PrintPlanLine(const RestoreItem& c) {
  std::string note = !c.conflict ? "" : "   (conflict: " + (c.why.empty() ? "changed since the session" : c.why) + ")";
  std::printf("  %-18s %s%s\n", DescribeChange(c).c_str(), EscapeForTerminal(c.path).c_str(),
              EscapeForTerminal(note).c_str());
}

// The plan's lines. On a terminal, a plan longer than the screen is
// summarised (unless `verbose`): how many of each kind of change, its
// conflicts, then its first lines, so that the question after it stays in
// view with its count. Into a pipe or a file, every line.
void PrintPlanLines(const RestorePlan& plan, bool verbose) {
  const int rows = TerminalRows();
  const size_t room = rows > 12 ? static_cast<size_t>(rows) - 8 : 4;
  if (verbose || rows == 0 || plan.changes.size() <= room) {
    for (const RestoreItem& c : plan.changes) PrintPlanLine(c);
    return;
  }
  std::map<std::string, size_t> kinds;
  for (const RestoreItem& c : plan.changes) ++kinds[DescribeChange(c)];
  for (const auto& [kind, n] : kinds) std::printf("  %8s  %s\n", Count(n).c_str(), kind.c_str());
  size_t shown = 0;
  const size_t head = room > kinds.size() + 2 ? room - kinds.size() - 2 : 2;
  // Conflicts first: they decide whether anything happens.
  for (const RestoreItem& c : plan.changes) {
    if (c.conflict && shown < head) PrintPlanLine(c), ++shown;
  }
  for (const RestoreItem& c : plan.changes) {
    if (!c.conflict && shown < head) PrintPlanLine(c), ++shown;
  }
  std::printf("  ... and %s more (--verbose lists them all; --dry-run --json gives the plan to a program)\n",
              Count(plan.changes.size() - shown).c_str());
}

// Applies `plan` (made against `tree`), making the root first when the
// session removed it (`make_root`: its target), then prints what it did and
// returns the exit status. Every change is told to `sink` first (null: the
// outer guard records them). `stop` ends it early at a consistent point
// (ApplyRestore); `result` says how far it went.
int ApplyPlan(const char* verb, const std::string& root, const SessionHistory& history,
              const RestoreRequest& request, const BlobStore& store, SafeTree* tree, RestorePlan* plan,
              GitStateRestore* git, const std::string& reflog_message, const RestoreItem* make_root,
              MutationSink* sink, RestoreResult* result, std::function<Status()> before_sync = nullptr,
              std::function<bool()> stop = nullptr) {
  umask(0);  // the modes restored are the journal's, not narrowed by the umask
  tree->SetSink(sink);
  Progress progress(std::string("guard ") + verb);
  // Paths, not steps: ApplyRestore passes over the paths to change twice
  // (what must go, then what must be written), two steps a path.
  auto counted = [&](size_t done, size_t total) {
    const size_t paths = total / 2;
    if (done <= paths) {
      progress.Update("checking and removing: paths", done, paths);
    } else {
      progress.Update("writing: paths", done - paths, paths);
    }
  };
  tree->SetBeforeSync([&progress, inner = std::move(before_sync)]() -> Status {
    progress.Say("making the restored files durable (one sync)");
    return inner ? inner() : Status::Ok();
  });
  if (make_root != nullptr) {
    Status made = tree->MakeRoot(make_root->target.mode & 07777);
    if (!made.ok()) return Error("making the root " + EscapeForTerminal(root) + " again: " + made.ToString(), 1);
    result->changed = 1;
    made = PlanRestore(history, *tree, store, request, plan);
    if (!made.ok()) return Error("root: " + made.ToString(), 1);
  }
  Status s = ApplyRestore(*plan, store, tree, result, counted, stop);
  progress.Done();
  // git's refs and index, after the files (hooks, config, packed-refs and
  // reflogs are back by then): each by compare-and-swap, each conflict its own.
  size_t git_conflicts = git->conflicts().size();
  if (s.ok() && !result->stopped) result->changed += git->Apply(sink, reflog_message, &result->failed);
  for (size_t i = git_conflicts; i < git->conflicts().size(); ++i) {
    std::fprintf(stderr, "guard: left as it is: %s\n", EscapeForTerminal(git->conflicts()[i]).c_str());
  }
  bool git_left = !git->conflicts().empty() || !plan->git.left.empty();
  for (const std::string& f : result->failed) std::fprintf(stderr, "guard: not restored: %s\n", EscapeForTerminal(f).c_str());
  if (!result->stopped) {
    for (const std::string& u : plan->unknown) std::fprintf(stderr, "guard: not restored: %s\n", EscapeForTerminal(u).c_str());
  }
  if (!s.ok()) return Error("syncing the restored files: " + s.ToString(), 1);
  if (result->stopped) return 1;  // the caller says how far it went
  bool whole = result->failed.empty() && plan->unknown.empty() && !git_left;
  std::printf("guard %s: %zu path%s changed%s\n", verb, result->changed, result->changed == 1 ? "" : "s",
              whole ? "" : "; some could not be restored (see above)");
  std::fflush(stdout);
  return whole ? 0 : 1;
}

// A signal caught before the restore's own session started (Ctrl-C at the
// prompt, or while the plan was made): nothing was changed or recorded.
int Cancelled(const char* verb) {
  int sig = RestoreInterruptSignal();
  std::fflush(stdout);
  std::fprintf(stderr, "guard: %s cancelled by %s before it changed anything\n", verb,
               sig == SIGINT ? "Ctrl-C" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
  return 128 + sig;
}

// The command that finishes an interrupted restore: the one the user typed.
std::string AgainCommand(const std::string& verb, const std::string& session_option) {
  return "guard " + verb + (session_option.empty() ? "" : " --session " + session_option);
}

}  // namespace

int RestoreCommand::Run() {
  const std::string verb_name = options_.redo ? "redo" : Verb(options_.direction);
  const char* verb = verb_name.c_str();
  // A reader that goes away (`guard undo --yes | head -1`) must not stop a
  // restore half-way: its writes fail with EPIPE instead, and the restore
  // finishes and records itself. The only program a restore starts is the
  // internal restore (inside a guard session), which wants the same.
  std::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C, SIGTERM and SIGHUP are caught from the start: before the
  // restore's own session starts, one cancels it (nothing changed, nothing
  // recorded: Cancelled); after, it stops the restore at a consistent point.
  // Recovery of an earlier session, run first, is finished either way.
  // Inside a guard session the outer guard handles them.
  const bool own_session = !options_.internal && !InsideGuardSession();
  if (own_session) CatchRestoreInterrupts();
  auto cancelled = [&] { return own_session && RestoreInterruptSignal() != 0; };
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) return Error("state directory: " + s.ToString(), 1);
  // No gc or forget sweeps the blobs this restore reads until it ends
  // (PinStore); taken before the session is chosen, so that a session a
  // forget removed first is not found, rather than found without its blobs.
  UniqueFd pin;
  s = PinStore(state, &pin);
  if (!s.ok()) return Error("state directory: " + s.ToString(), 1);
  // The internal command is given its session by id, and runs before the
  // root it restores may exist again.
  std::string root;
  if (!options_.internal) {
    s = FindSessionRoot(state, options_.root, &root);
    if (!s.ok()) return Error(s.ToString(), 1);
    RecoverBeforeCommand(root, false);
  }
  std::string id;
  s = SelectSession(state, options_.session, root, &id);
  if (!s.ok()) return Error(s.message(), 2);

  SessionHistory history;
  s = SessionHistory::Load(state, id, &history);
  if (!s.ok()) return Error("session " + id + ": " + s.ToString(), 1);
  const SessionMeta& meta = history.meta();
  if (meta.state == SessionState::kRunning && !options_.internal) {
    if (SupervisorAlive(meta)) {
      return Error("session " + id + " is still running (guard pid " + std::to_string(meta.supervisor_pid) +
                       "); it cannot be " + (options_.direction == RestoreDirection::kUndo ? "undone" : "replayed") +
                       " until it ends",
                   1);
    }
    return Error("session " + id + " was interrupted and has not been recovered yet: run `guard recover` first", 1);
  }
  // (The internal command's parent has already said these.)
  if (!options_.internal)
    for (const std::string& p : history.problems()) std::fprintf(stderr, "guard: warning: session %s: %s\n", id.c_str(), p.c_str());

  // What is asked, read against what earlier restores of the session did
  // (restore_chain.h); the internal command is handed the answer.
  ChainedRequest chained;
  RestoreRequest& request = chained.request;
  std::vector<std::string> rel_paths;
  s = RootRelative(meta.root, options_.paths, &rel_paths);
  if (!s.ok()) return Error(s.ToString(), 2);
  if (options_.internal) {
    request.direction = options_.direction;
    request.exact_boundary = true;
    request.boundary = options_.boundary;
    request.expected = options_.expect;
    request.absent_expected = options_.absent_expected;
    request.paths = rel_paths;
  } else {
    RestoreChain chain;
    if (Status c = LoadRestoreChain(state, id, history.last_seq(), &chain); !c.ok()) {
      std::fprintf(stderr, "guard: warning: earlier restores of session %s: %s\n", id.c_str(), c.ToString().c_str());
      chain = RestoreChain();
    }
    RestoreAsk ask;
    ask.verb = verb_name;
    ask.to = options_.to;
    ask.turns = options_.turns;
    ask.paths = rel_paths;
    if (Status t = MakeChainedRequest(history, id, chain, ask, &chained); !t.ok()) {
      return Error(t.message(), t.code() == Status::Code::kInvalidArgument ? 2 : 1);
    }
    if (chained.already_undone) {
      std::string before;
      std::string next = SessionBefore(state, meta.root, id, &before).ok()
                             ? "the session before it is " + before + " (guard undo --session " + before + ")"
                             : "it is the first session of " + EscapeForTerminal(meta.root);
      return Error("session " + id + " is already undone (by session " + chain.last_id + "); " + next +
                       "; guard redo or guard replay brings it back",
                   1);
    }
    if (chained.finishing) {
      // The files it wrote are checked by content, whatever its log says
      // (a power loss can leave the log behind the tree, or a file renamed
      // into place without its content): PlanRestore.
      SessionMeta cut_meta;
      if (LoadSessionMeta(state.session_dir(chain.interrupted_id) + "/meta.json", &cut_meta).ok()) {
        request.unfinished_since_ns = cut_meta.started_ns;
      }
      const RestoreOf& cut = chain.interrupted;
      std::fprintf(stderr, "guard %s: finishing the interrupted %s %s of session %s", verb, cut.verb.c_str(),
                   chain.interrupted_id.c_str(), id.c_str());
      if (cut.done != 0) {  // 0 also when a kill left it unknown
        std::fprintf(stderr, " (%s of %s paths were restored)", Count(cut.done).c_str(), Count(cut.planned).c_str());
      }
      std::fprintf(stderr, "\n");
    }
  }
  if (!options_.internal && !options_.paths.empty()) {
    // Refused before anything changes: a PATH with a typo, or of another
    // session, must not pass for done.
    std::vector<std::string> untouched = Untouched(history, options_.paths, rel_paths);
    if (!untouched.empty()) {
      std::string names;
      for (const std::string& u : untouched) names += (names.empty() ? "" : ", ") + EscapeForTerminal(u);
      return Error(names + (untouched.size() == 1 ? " was" : " were") + " not touched by session " + id +
                       "; nothing was changed",
                   1);
    }
  }
  if (request.direction == RestoreDirection::kUndo) {
    std::vector<SessionHistory> overlapping;
    s = LoadOverlappingSessions(state, meta, &overlapping);
    if (!s.ok()) return Error("sessions: " + s.ToString(), 1);
    request.changed_by_others = ChangedByOverlappingSessions(history, request.boundary, overlapping);
  }

  // A session that removed its root (rm -rf ROOT) left nothing to open: the
  // plan is made against an absent tree, in which it makes the root again
  // (below); the internal command makes it, under the outer guard.
  SafeTree tree;
  s = SafeTree::Open(meta.root, &tree);
  bool root_gone = s.IsNotFound();
  if (root_gone) {
    SafeTree::OpenAbsent(meta.root, &tree);
    s = Status::Ok();
  }
  if (!s.ok()) return Error("root: " + s.ToString(), 1);
  std::unique_ptr<BlobStore> store;
  s = BlobStore::Open(state.store_dir(), &store);
  if (!s.ok()) return Error("blob store: " + s.ToString(), 1);

  RestorePlan plan;
  s = PlanRestore(history, tree, *store, request, &plan);
  if (!s.ok()) return Error(s.ToString(), 1);
  // HEAD, refs and the index: read from the repositories as they are now
  // (git_state_restore.h).
  GitStateRestore git;
  if (!root_gone) {
    s = GitStateRestore::Prepare(meta.root, plan.git, *store, &git);
    if (!s.ok()) return Error("git: " + s.ToString(), 1);
  }
  const std::string reflog_message = std::string("guard ") + verb + ": session " + id;
  if (cancelled()) return Cancelled(verb);
  const RestoreItem* make_root = nullptr;
  for (const RestoreItem& c : plan.changes) {
    if (c.path == ".") make_root = &c;
  }
  if (root_gone && make_root == nullptr && !plan.changes.empty()) {
    return Error("the root " + EscapeForTerminal(meta.root) + " is gone: " + verb + " the whole session (no PATH) to make it again",
                 1);
  }
  if (root_gone && make_root != nullptr) {
    std::string parent = std::filesystem::path(meta.root).parent_path().string();
    struct stat st;
    if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Error("the root " + EscapeForTerminal(meta.root) + " is gone, and so is " + EscapeForTerminal(parent) +
                       ", which guard did not record: make it first",
                   1);
    }
  }

  if (options_.json && !options_.internal) {
    std::printf("%s\n", PlanJson(verb, id, meta.root, plan, git).dump(2).c_str());
    if (plan.conflicts() > 0 && !options_.force) return 1;
    return plan.unknown.empty() ? 0 : 1;
  }
  if (!options_.internal) {
    for (const std::string& u : plan.unknown) std::fprintf(stderr, "guard: cannot %s %s\n", verb, EscapeForTerminal(u).c_str());
    for (const std::string& n : plan.notes) std::fprintf(stderr, "guard: note: %s\n", EscapeForTerminal(n).c_str());
    // The plan is only as whole as the log (evidence of forgery: docs/security.md).
    if (const std::string line = LogIncompleteLine(meta); !line.empty()) {
      std::printf("guard %s: session %s: %s\n", verb, id.c_str(), EscapeForTerminal(line).c_str());
    }
    // git's own files that moved since: each left alone, never a stop.
    for (const std::string& l : plan.git.left) std::fprintf(stderr, "guard: left as it is: %s\n", EscapeForTerminal(l).c_str());
    for (const std::string& l : git.conflicts()) std::fprintf(stderr, "guard: left as it is: %s\n", EscapeForTerminal(l).c_str());
    if (plan.git.objects_kept > 0) {
      std::fprintf(stderr, "guard: note: git's objects stay (%zu path(s) under .git/objects): harmless, and git gc "
                           "prunes those nothing uses\n", plan.git.objects_kept);
    }
    // An interrupted restore with nothing left to do is still finished:
    // recorded, so that its chain says it is done.
    if (plan.changes.empty() && git.changes().empty() && (!chained.finishing || options_.dry_run)) {
      std::printf("guard %s: session %s: nothing to change in %s\n", verb, id.c_str(), meta.root.c_str());
      return plan.unknown.empty() && plan.git.left.empty() && git.conflicts().empty() ? 0 : 1;
    }
    size_t to_change = plan.changes.size() + git.changes().size();
    std::printf("guard %s: session %s: %s path%s to change in %s:\n", verb, id.c_str(), Count(to_change).c_str(),
                to_change == 1 ? "" : "s", meta.root.c_str());
    PrintPlanLines(plan, options_.verbose);
    for (const GitStateRestore::Change& c : git.changes()) {
      std::printf("  %-18s %s   (%s)\n", c.action.c_str(), EscapeForTerminal(c.what).c_str(),
                  EscapeForTerminal(c.detail).c_str());
    }
    std::fflush(stdout);
    if (plan.conflicts() > 0 && !options_.force) {
      std::fprintf(stderr,
                   "guard: %zu conflict%s: %s changed since the session; nothing was changed "
                   "(--force overwrites them)\n",
                   plan.conflicts(), plan.conflicts() == 1 ? "" : "s", plan.conflicts() == 1 ? "a path was" : "paths were");
      return 1;
    }
    if (options_.dry_run) return 0;
    if (!options_.yes && to_change > 0) {
      if (!isatty(STDIN_FILENO)) {
        return Error(std::string("refusing to change files without --yes (no terminal to ask)"), 2);
      }
      if (cancelled()) return Cancelled(verb);
      // The prompt's read returns at Ctrl-C (no SA_RESTART) rather than wait on.
      if (own_session) CatchRestoreInterrupts(false);
      // The count again: a long plan's head may have scrolled away.
      bool yes = Confirm(std::string("Apply this ") + verb + " (" + Count(to_change) + " path" +
                         (to_change == 1 ? "" : "s") + ")?");
      if (own_session) CatchRestoreInterrupts(true);
      if (cancelled()) {
        std::fputc('\n', stdout);  // the prompt's line, left open
        return Cancelled(verb);
      }
      if (!yes) return Error("nothing changed", 1);
    }
    RestoreTestPause();
    if (cancelled()) return Cancelled(verb);
    // The internal command gets the plan's terms, not the words typed.
    std::vector<std::string> argv = {SelfExe(), "__restore", Verb(request.direction), "--session", id,
                                     "--boundary", std::to_string(request.boundary)};
    for (uint64_t e : request.expected) argv.insert(argv.end(), {"--expect", std::to_string(e)});
    if (request.absent_expected) argv.push_back("--absent-expected");
    if (options_.force) argv.push_back("--force");
    for (const std::string& p : request.paths) argv.push_back(PathJoin(meta.root, p));
    if (own_session) {
      // The restore records itself, untraced (restore_session.h): a session
      // of its own, which `guard undo --session` reverses. Ctrl-C, SIGTERM
      // and SIGHUP from here on stop it at a consistent point, recorded
      // (restore_interrupt.h).
      chained.account.planned = plan.changes.size();
      std::unique_ptr<RestoreSession> session;
      s = RestoreSession::Start(state, meta.root, argv, chained.account, &session);
      if (!s.ok()) return Error(std::string("recording the ") + verb + ": " + s.ToString(), 1);
      RestoreResult result;
      int code = ApplyPlan(verb, meta.root, history, request, *store, &tree, &plan, &git, reflog_message,
                           root_gone ? make_root : nullptr, session->sink(), &result, [&session] { return session->Commit(); },
                           [] { return RestoreInterruptSignal() != 0; });
      int sig = result.stopped ? RestoreInterruptSignal() : 0;
      Status sealed = session->Seal(code, tree.written(), sig, result.changed);
      if (!sealed.ok()) Error("sealing the session of the " + std::string(verb) + ": " + sealed.ToString(), 1);
      if (sig != 0) {
        std::fprintf(stderr, "guard: interrupted: %s of %s paths restored; `%s` again finishes it (session %s)\n",
                     Count(result.changed).c_str(), Count(plan.changes.size()).c_str(),
                     AgainCommand(verb_name, options_.session).c_str(), session->id().c_str());
        return 128 + sig;
      }
      std::fprintf(stderr, "guard: %s recorded as session %s (guard undo --session %s reverses it)\n", verb,
                   session->id().c_str(), session->id().c_str());
      pin = UniqueFd();  // the automatic gc would find the store pinned
      char real[PATH_MAX];
      if (options_.auto_gc && realpath(state.path().c_str(), real) != nullptr) StartAutomaticGc(real);
      return sealed.ok() ? code : 1;
    }
    // Inside a guard session: the outer guard records the restore, which
    // runs as guard's internal command (a second session could not write
    // the state directory the outer guard protects).
    RunCommand::Options run;
    run.root = meta.root;
    run.recorded_root = true;
    run.quiet = true;
    // Whatever the restore destroys is saved first, or the call is refused:
    // PlanRestore counts on it for content the store does not have.
    run.on_failure = CaptureFailurePolicy::kBlock;
    run.argv = argv;
    RunCommand runner(std::move(run));
    int code = runner.Run();
    if (!runner.session_id().empty()) {
      std::fprintf(stderr, "guard: %s recorded as session %s (guard undo --session %s reverses it)\n", verb,
                   runner.session_id().c_str(), runner.session_id().c_str());
    }
    return code;
  }

  // Internal: apply now (the outer guard records every change).
  if (plan.conflicts() > 0 && !options_.force) {
    return Error(std::to_string(plan.conflicts()) + " path(s) changed since the session; nothing changed", 1);
  }
  RestoreResult result;
  return ApplyPlan(verb, meta.root, history, request, *store, &tree, &plan, &git, reflog_message,
                   root_gone ? make_root : nullptr, nullptr, &result);
}

// The command line of `guard undo`, `guard replay` and `guard __restore` (subcommand.h).
namespace {

const char* const kUndoSummary =
    "Put every path the session touched back as it was before it (or before operation SEQ, just "
    "after mark MARK, before the last N marked turns). "
    "Prints the changes and asks; paths changed since the session are conflicts and stop it "
    "unless --force. The undo is recorded as a session of its own.";
const char* const kRedoSummary =
    "Reverse the last undo of the session (default: the last session of this root that guard's own "
    "restores did not make): its paths back as that undo found them. Repeated, it reverses the undo "
    "before, as jj redo does. Same rules as undo.";
const char* const kReplaySummary =
    "Put every path the session touched into the state the session left it in (or just after "
    "operation SEQ or mark MARK): the way back after the session's changes were reverted. Same rules as undo.";

// What undo, replay and redo share: asking, conflicts, a long plan.
void DeclareApplyOptions(CLI::App* cmd, RestoreCommand::Options* options, const std::string& since) {
  cmd->add_flag("-y,--yes", options->yes, "Do not ask (required without a terminal)");
  cmd->add_flag("--force", options->force, "Overwrite paths changed since " + since + " (conflicts)");
  cmd->add_flag("-v,--verbose", options->verbose, "List every change of a plan longer than the terminal");
}

// `guard undo` and `guard replay`: the same options, but --turns.
class RestoreSubcommand final : public Subcommand {
 public:
  RestoreSubcommand(RestoreDirection direction, const char* summary) : summary_(summary) {
    options_.direction = direction;
  }
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(summary_);
    line->AddSession(cmd, &options_.session, kSessionHelp);
    cmd->add_option("--to", options_.to,
                    "Stop at operation SEQ, or at mark MARK: @N (its number as guard show prints it) or its label")
        ->type_name("SEQ|MARK");
    if (options_.direction == RestoreDirection::kUndo) {
      cmd->add_option("--turns", options_.turns,
                      "Undo the last N marked turns (a turn: from a mark made without --step to the next one, "
                      "or the end)")
          ->type_name("N")
          ->check(CountValidator(1000000))
          ->excludes("--to");
    }
    cmd->add_flag("--dry-run", options_.dry_run, "Only print what would change");
    cmd->add_flag("--json", options_.json, "With --dry-run: print the plan as JSON (docs/json.md)")->needs("--dry-run");
    DeclareApplyOptions(cmd, &options_, "the session");
    cmd->add_option("paths", options_.paths, "Only these paths (files or directories)");
    line->AddRoot(cmd);
  }
  int Run(const Invocation& invocation) override {
    options_.root = invocation.root;
    options_.auto_gc = invocation.settings->auto_gc.value;
    return RestoreCommand(options_).Run();
  }

 private:
  const char* summary_;
  RestoreCommand::Options options_;
};

// `guard redo`: reverses the last undo of the session (restore_chain.h).
class RedoSubcommand final : public Subcommand {
 public:
  RedoSubcommand() {
    options_.direction = RestoreDirection::kReplay;
    options_.redo = true;
  }
  void Declare(CLI::App* cmd, SharedOptions* line) override {
    cmd->description(kRedoSummary);
    line->AddSession(cmd, &options_.session, kSessionHelp);
    cmd->add_flag("--dry-run", options_.dry_run, "Only print what would change");
    DeclareApplyOptions(cmd, &options_, "the undo");
    line->AddRoot(cmd);
  }
  int Run(const Invocation& invocation) override {
    options_.root = invocation.root;
    options_.auto_gc = invocation.settings->auto_gc.value;
    return RestoreCommand(options_).Run();
  }

 private:
  RestoreCommand::Options options_;
};

// `guard __restore undo|replay`: the internal form, applied under the
// outer guard (restore_command.h). Hidden.
class InternalRestoreSubcommand final : public Subcommand {
 public:
  InternalRestoreSubcommand() { options_.internal = true; }
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->group("");
    cmd->add_option("verb", verb_)->required()->check(CLI::IsMember({"undo", "replay"}));
    cmd->add_option("--session", options_.session);
    cmd->add_option("--boundary", options_.boundary)->required();
    cmd->add_option("--expect", options_.expect);
    cmd->add_flag("--absent-expected", options_.absent_expected);
    cmd->add_flag("--force", options_.force);
    cmd->add_option("paths", options_.paths);
  }
  int Run(const Invocation&) override {
    options_.direction = verb_ == "undo" ? RestoreDirection::kUndo : RestoreDirection::kReplay;
    return RestoreCommand(options_).Run();
  }

 private:
  std::string verb_;
  RestoreCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeUndoSubcommand() {
  return std::make_unique<RestoreSubcommand>(RestoreDirection::kUndo, kUndoSummary);
}
std::unique_ptr<Subcommand> MakeReplaySubcommand() {
  return std::make_unique<RestoreSubcommand>(RestoreDirection::kReplay, kReplaySummary);
}
std::unique_ptr<Subcommand> MakeRedoSubcommand() { return std::make_unique<RedoSubcommand>(); }
std::unique_ptr<Subcommand> MakeInternalRestoreSubcommand() { return std::make_unique<InternalRestoreSubcommand>(); }

}  // namespace guard
