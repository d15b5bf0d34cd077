#include "supervisor/commands/restore_command.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/state_dir.h"
#include "common/path_util.h"
#include "supervisor/capture/recovery.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/commands/run_command.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/restore/overlapping_sessions.h"

namespace guard {
namespace {

const char* Verb(RestoreDirection d) { return d == RestoreDirection::kUndo ? "undo" : "replay"; }

int Error(const std::string& msg, int code) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return code;
}

std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

// Maps PATH arguments (relative to the current directory) to root-relative paths.
Status RootRelative(const std::string& root, const std::vector<std::string>& args,
                    std::vector<std::string>* out) {
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return Status::FromErrno("current directory", errno);
  for (const std::string& a : args) {
    std::string abs = a.empty() || a[0] != '/' ? std::string(cwd) + "/" + a : a;
    // Lexical normalisation: the path may no longer exist.
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= abs.size()) {
      size_t slash = abs.find('/', start);
      std::string part = abs.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    std::string norm;
    for (const std::string& p : parts) norm += "/" + p;
    if (norm.empty()) norm = "/";
    if (!PathIsUnder(norm, root)) return Status::InvalidArgument(a + " is outside the session's root " + root);
    out->push_back(norm == root ? "." : norm.substr(root == "/" ? 1 : root.size() + 1));
  }
  return Status::Ok();
}

bool Confirm(const std::string& question) {
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "guard";
}

}  // namespace

int RestoreCommand::Run() {
  const char* verb = Verb(options_.direction);
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) return Error("state directory: " + s.ToString(), 1);
  std::string root;
  s = FindRoot("", &root);
  if (!s.ok()) return Error(s.ToString(), 1);
  if (!options_.internal) RecoverBeforeCommand(root, false);
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
  if (options_.to_seq != 0) {
    bool found = false;
    for (const HistoryOp& h : history.all_ops()) found = found || h.op.seq == options_.to_seq;
    if (!found) {
      return Error("--to " + std::to_string(options_.to_seq) + ": session " + id +
                       " has no operation with that sequence number (guard show lists them)",
                   2);
    }
  }

  RestoreRequest request;
  request.direction = options_.direction;
  request.to_seq = options_.to_seq;
  s = RootRelative(meta.root, options_.paths, &request.paths);
  if (!s.ok()) return Error(s.ToString(), 2);
  if (options_.direction == RestoreDirection::kUndo) {
    std::vector<SessionHistory> overlapping;
    s = LoadOverlappingSessions(state, meta, &overlapping);
    if (!s.ok()) return Error("sessions: " + s.ToString(), 1);
    uint64_t boundary = options_.to_seq ? history.CallStart(options_.to_seq) - 1 : 0;
    request.changed_by_others = ChangedByOverlappingSessions(history, boundary, overlapping);
  }

  SafeTree tree;
  s = SafeTree::Open(meta.root, &tree);
  if (!s.ok()) return Error("root: " + s.ToString(), 1);
  std::unique_ptr<BlobStore> store;
  s = BlobStore::Open(state.store_dir(), &store);
  if (!s.ok()) return Error("blob store: " + s.ToString(), 1);

  RestorePlan plan;
  s = PlanRestore(history, tree, *store, request, &plan);
  if (!s.ok()) return Error(s.ToString(), 1);

  if (!options_.internal) {
    for (const std::string& u : plan.unknown) std::fprintf(stderr, "guard: cannot %s %s\n", verb, Printable(u).c_str());
    for (const std::string& n : plan.notes) std::fprintf(stderr, "guard: note: %s\n", Printable(n).c_str());
    if (plan.changes.empty()) {
      std::printf("guard %s: session %s: nothing to change in %s\n", verb, id.c_str(), meta.root.c_str());
      return plan.unknown.empty() ? 0 : 1;
    }
    std::printf("guard %s: session %s: %zu path%s to change in %s:\n", verb, id.c_str(), plan.changes.size(),
                plan.changes.size() == 1 ? "" : "s", meta.root.c_str());
    for (const RestoreItem& c : plan.changes) {
      std::string note = !c.conflict ? "" : "   (conflict: " + (c.why.empty() ? "changed since the session" : c.why) + ")";
      std::printf("  %-18s %s%s\n", DescribeChange(c).c_str(), Printable(c.path).c_str(), Printable(note).c_str());
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
    if (!options_.yes) {
      if (!isatty(STDIN_FILENO)) {
        return Error(std::string("refusing to change files without --yes (no terminal to ask)"), 2);
      }
      if (!Confirm(std::string("Apply this ") + verb + "?")) return Error("nothing changed", 1);
    }
    // Apply under guard: the restore is recorded as a session of its own.
    RunCommand::Options run;
    run.root = meta.root;
    run.quiet = true;
    // Whatever the restore destroys is saved first, or the call is refused:
    // PlanRestore counts on it for content the store does not have.
    run.on_failure = CaptureFailurePolicy::kBlock;
    run.argv = {SelfExe(), "__restore", verb, "--session", id};
    if (options_.to_seq) run.argv.insert(run.argv.end(), {"--to", std::to_string(options_.to_seq)});
    if (options_.force) run.argv.push_back("--force");
    for (const std::string& p : request.paths) run.argv.push_back(p == "." ? meta.root : meta.root + "/" + p);
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
  umask(0);  // the modes restored are the journal's, not narrowed by the umask
  s = ApplyRestore(plan, *store, &tree, &result);
  for (const std::string& f : result.failed) std::fprintf(stderr, "guard: not restored: %s\n", Printable(f).c_str());
  for (const std::string& u : plan.unknown) std::fprintf(stderr, "guard: not restored: %s\n", Printable(u).c_str());
  if (!s.ok()) return Error("syncing the restored files: " + s.ToString(), 1);
  std::printf("guard %s: %zu path%s changed%s\n", verb, result.changed, result.changed == 1 ? "" : "s",
              result.failed.empty() && plan.unknown.empty() ? "" : "; some could not be restored (see above)");
  return result.failed.empty() && plan.unknown.empty() ? 0 : 1;
}

}  // namespace guard
