#include "supervisor/session/recovery.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits.h>
#include <stdlib.h>

#include <memory>
#include <mutex>
#include <set>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "common/journal_reader.h"
#include "common/journal_writer.h"
#include "common/os_calls.h"
#include "common/session_history.h"
#include "common/session_meta.h"
#include "common/shim_interface.h"
#include "common/ring_segment.h"
#include "supervisor/capture/capture.h"
#include "supervisor/session/deferred_seal.h"
#include "supervisor/session/half_made_session.h"
#include "supervisor/session/orphan_pending.h"
#include "supervisor/session/shim_feed.h"
#include "common/staged_name.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/session/recovery_end_state.h"
#include "supervisor/session/session_keeper.h"
#include "supervisor/session/watch_catch_up.h"
#include "supervisor/base/session_logger.h"

namespace guard {
namespace {

// Opens the directory holding root-relative `rel` below `root`, one
// component at a time without following a symlink; -1 if it cannot.
int OpenParentBeneath(const std::string& root, const std::string& rel) {
  UniqueFd cur;
  if (!OpenFile(root, O_PATH | O_DIRECTORY, 0, &cur).ok()) return -1;
  size_t start = 0;
  for (size_t slash; (slash = rel.find('/', start)) != std::string::npos; start = slash + 1) {
    std::string name = rel.substr(start, slash - start);
    if (name.empty() || name == "." || name == "..") return -1;
    int fd = static_cast<int>(
        GUARD_EINTR_RETRY(openat(cur.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    if (fd < 0) return -1;
    cur.reset(fd);
  }
  return cur.release();
}

// A restore killed between staging a file and renaming it into place leaves
// the staged copy beside its target. The restore's own records name each
// one it created: those still there, regular files with exactly the staged
// form of name, are removed; nothing else is.
size_t RemoveStagedFiles(const SessionMeta& meta, const SessionHistory& history) {
  size_t removed = 0;
  for (const HistoryOp& h : history.ops()) {
    const Record& r = h.op;
    if (r.kind != OpKind::kCreate || !h.inside()) continue;
    size_t slash = r.path.rfind('/');
    std::string name = slash == std::string::npos ? r.path : r.path.substr(slash + 1);
    if (!IsStagedName(name)) continue;
    int fd = OpenParentBeneath(meta.root, r.path);
    if (fd < 0) continue;
    UniqueFd dir(fd);
    struct stat st;
    if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (unlinkat(dir.get(), name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

// Drains the session's ring segment, if it left one, into the journal
// through a Capture of its own, then removes the segment. Returns the
// calls it found; their pending names join `named`.
uint64_t DrainLeftRing(const SessionMeta& meta, const StateDir& state, Recorder* recorder,
                       const std::shared_ptr<spdlog::logger>& log, std::set<std::string>* named) {
  char real[PATH_MAX];
  CaptureConfig config;
  config.root = meta.root;
  config.state_dir = realpath(state.path().c_str(), real) != nullptr ? std::string(real) : state.path();
  // The calls have run: a pre-image missing now cannot be had by refusing.
  config.on_failure = CaptureFailurePolicy::kAllow;
  Capture capture(config, recorder, log);
  std::mutex mu;
  ShimFeed feed(&capture, &mu, meta.id, log);
  feed.KeepPendingNames();
  feed.SetEvidenceHandler([recorder, &log](const std::string& what) {
    if (Status s = recorder->NoteIncomplete(what); !s.ok()) log->error("recording the evidence: {}", s.ToString());
  });
  // The pre-images the shim left in the session's inbox are taken as their
  // CALLs are drained; those without one after (state_dir.h).
  const bool inbox = feed.SetInbox(state.session_inbox(meta.id), recorder->store()).ok();
  uint64_t calls = 0;
  RingSegment segment;
  if (meta.ring.empty() || !IsRingSegmentName(meta.ring)) {
    // no ring
  } else if (Status s = RingSegment::Open(meta.ring, &segment); !s.ok()) {
    log->info("ring segment {}: {} (nothing left in it)", meta.ring, s.ToString());
  } else {
    if (Status a = feed.Attach(segment.base(), segment.size()); a.ok()) {
      feed.Stop();  // drains; a CALL without its OUTCOME may have happened
      calls = feed.calls();
      named->insert(feed.pending_names().begin(), feed.pending_names().end());
    } else {
      log->error("ring segment {}: {}", meta.ring, a.ToString());
    }
    if (Status r = RingSegment::Remove(meta.ring); !r.ok()) log->warn("ring segment {}: {}", meta.ring, r.ToString());
    log->warn("recovery: {} shim call(s) drained from the ring", calls);
  }
  if (inbox) feed.EmptyInbox();
  return calls;
}

}  // namespace

Status RecoverSession(const StateDir& state, const std::string& id, bool* recovered, RecoveryReport* report) {
  *recovered = false;
  auto start = std::chrono::steady_clock::now();
  std::string dir = state.session_dir(id);
  // Two guards starting at once must not both recover the same session.
  UniqueFd lock;
  GUARD_RETURN_IF_ERROR(OpenFile(dir + "/recovery.lock", O_RDWR | O_CREAT, 0600, &lock));
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) return Status::Ok();  // another guard is on it

  SessionMeta meta;
  GUARD_RETURN_IF_ERROR(LoadSessionMeta(dir + "/meta.json", &meta));
  if (meta.state != SessionState::kRunning || SupervisorAlive(meta)) return Status::Ok();
  report->id = id;
  // Without a tracer, the keeper may still be stopping the session's
  // processes (session_keeper.h): the tree is read once it is done.
  WaitForKeeper(dir + "/alive", 30 * 1000);

  std::unique_ptr<JournalWriter> journal;
  GUARD_RETURN_IF_ERROR(JournalWriter::OpenForAppend(dir + "/journal", &journal, &report->dropped_bytes));
  std::vector<Record> records;
  GUARD_RETURN_IF_ERROR(ReadAllRecords(dir + "/journal", &records, &report->problems));
  std::unique_ptr<BlobStore> store;
  GUARD_RETURN_IF_ERROR(BlobStore::Open(state.store_dir(), &store));

  uint64_t max_seq = 0, ops = 0;
  int64_t last_wall = meta.started_ns;
  std::set<std::string> named;  // every pending name a surviving record holds
  for (const Record& r : records) {
    max_seq = std::max(max_seq, r.seq);
    last_wall = std::max(last_wall, r.wall_ns);
    if (IsOperation(r.kind)) ++ops;
    for (const FileState* f : {&r.before, &r.before2, &r.after}) {
      if (f->blob.kind == BlobRef::Kind::kPending) named.insert(f->blob.pending);
    }
    if (r.kind == OpKind::kBlobResolved) named.insert(r.pending);
  }
  // The evidence of forgery the live supervisor recorded stays the
  // session's, whether or not it reached meta.json before it died.
  for (const Record& r : records) {
    if (r.kind != OpKind::kIncomplete || meta.incomplete_ns != 0) continue;
    meta.incomplete_ns = r.wall_ns;
    meta.incomplete_what = r.label;
  }
  SessionHistory history = SessionHistory::FromRecords(meta, records);
  auto log = MakeSessionLogger(dir, id);
  log->warn("recovering: the supervisor is gone; {} torn bytes dropped", report->dropped_bytes);
  // A restore killed before it applied its whole plan: sealed as
  // interrupted, so that the same command typed again finishes it
  // (supervisor/restore/restore_chain.h). How far it went is not known.
  if (!meta.restore.verb.empty()) meta.restore.interrupted = true;
  Recorder recorder(meta, dir + "/meta.json", std::move(journal), store.get(), log);
  recorder.ContinueAt(max_seq + 1, ops);
  // The operations that took effect (or may have: outcome unknown).
  for (const HistoryOp& h : history.ops()) {
    const Record& r = h.op;
    if (h.inside()) {
      recorder.NoteFirstState(r.path, r.before);
      recorder.NoteChanged(r.path);
    }
    if (h.inside2()) {
      recorder.NoteFirstState(r.path2, r.before2);
      recorder.NoteChanged(r.path2);
    }
    for (const FileState* s : {&r.before, &r.before2}) {
      if (s->blob.kind == BlobRef::Kind::kPending) {
        recorder.NotePending(s->blob.pending);
        ++report->resolved_blobs;
      }
    }
    bool renames = r.kind == OpKind::kRename || r.kind == OpKind::kExchange;
    // Across the root boundary the outside side's type is not recorded: a
    // directory may have entered at the inside name (Capture::Before walks
    // it then; sealing walks it again, and a walk of a file finds nothing).
    bool may_enter = renames && h.inside() != h.inside2();
    if (MovesDirectoryWithinRoot(r) || may_enter) {
      if (h.inside2()) recorder.NoteMovedDirectory(r.path2);
      if (h.inside()) recorder.NoteMovedDirectory(r.path);
    }
  }
  // Those whose record was lost (orphan_pending.h).
  // What the shim put in the ring and the dead supervisor never drained:
  // each call in the journal now, in ring order, as the feed would have.
  report->ring_calls = DrainLeftRing(meta, state, &recorder, log, &named);
  // Watch mode: what changed after the watcher's last round, recorded now
  // as the session's (watch_catch_up.h).
  WatchCatchUp caught;
  {
    char real[PATH_MAX];
    const std::string state_dir = realpath(state.path().c_str(), real) != nullptr ? std::string(real) : state.path();
    Status s = CatchUpWatchSession(meta, dir, state_dir, records, store.get(), &recorder, SupervisorLastAlive(dir),
                                   log, &caught);
    if (!s.ok()) log->error("catch-up of the watch session: {}", s.ToString());
  }
  report->caught_up = caught.recorded;
  report->caught_up_after_end = caught.after_end;
  if (report->ring_calls > 0 || caught.recorded > 0 || caught.kept_directories > 0) {
    // The end states below are told from the history: it must hold the
    // calls just drained (and the changes just caught up), or a path whose last call was the shim's would
    // get an older post-image as its end.
    std::vector<Record> all;
    std::vector<std::string> again;  // damage was reported by the first read
    GUARD_RETURN_IF_ERROR(ReadAllRecords(dir + "/journal", &all, &again));
    history = SessionHistory::FromRecords(meta, all);
  }
  OrphanPendingCount orphans;
  Status swept = SweepOrphanPending(store.get(), id, named, &recorder, log.get(), &orphans);
  if (!swept.ok()) log->error("pending blobs without a record: {}", swept.ToString());
  // The shim's pre-images no record names: kept (orphan_pending.h).
  UnnamedPendingCount unnamed = KeepUnnamedShimPending(
      store.get(), id, [&named](std::string_view name) { return named.count(std::string(name)) != 0; }, &recorder,
      log.get());
  report->unrecorded_kept = orphans.kept + unnamed.kept;
  report->unrecorded_removed = orphans.removed + unnamed.past_bound;
  // The tree, or the session's saved work where the tree was changed after
  // the session died (recovery_end_state.h).
  RecoveredEndState end_states(&history, store.get(), meta.root, SupervisorLastAlive(dir));
  // Before sealing, so that the final states recorded are those of the tree cleaned.
  if (IsRestoreSession(meta)) report->staged_removed = RemoveStagedFiles(meta, history);
  report->final_states = recorder.touched_count();
  Status s = recorder.Seal(SessionState::kRecovered, -1, 0, last_wall, &end_states);
  report->kept_saved = end_states.kept_saved();
  report->end_not_saved = end_states.end_not_saved();
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report->incomplete = LogIncompleteLine(recorder.meta());
  if (!s.ok()) return s;
  // A deferred seal its sealer did not finish is finished now (deferred_seal.h).
  report->seal_left = SealMarked(dir);
  ClearSealMark(dir);
  *recovered = true;
  return Status::Ok();
}

namespace {
RecoveredHook recovered_hook = nullptr;  // set by main before any thread starts
}  // namespace

void SetRecoveredHook(RecoveredHook hook) { recovered_hook = hook; }

Status RecoverOrphans(const StateDir& state, const std::string& root, std::vector<RecoveryReport>* reports) {
  std::vector<std::string> ids;
  GUARD_RETURN_IF_ERROR(state.ListSessions(&ids));
  Status first;
  for (const std::string& id : ids) {
    const std::string dir = state.session_dir(id);
    // Looked at before and found done for good: no meta.json to parse. A
    // start looks at every session, so this is what keeps it from growing
    // with them (1,000 sessions cost 26 ms a start when each was parsed).
    if (::access((dir + "/" + kSealedMark).c_str(), F_OK) == 0) continue;
    SessionMeta meta;
    Status loaded = LoadSessionMeta(dir + "/meta.json", &meta);
    if (loaded.IsNotFound()) {
      // Made, but its meta.json never written (half_made_session.h).
      HalfMade what = HalfMade::kNot;
      Status mended = MendHalfMadeSession(state, id, &what);
      if (!mended.ok() && first.ok()) first = Status::IOError("session " + id + " without meta.json: " + mended.ToString());
      if (what == HalfMade::kRemoved) {
        RecoveryReport removed;
        removed.id = id;
        removed.half_made_removed = true;
        reports->push_back(std::move(removed));
      }
      if (what != HalfMade::kRebuilt) continue;
      loaded = LoadSessionMeta(dir + "/meta.json", &meta);
    }
    if (!loaded.ok()) continue;
    if (meta.state != SessionState::kRunning && !SealMarked(dir)) {
      // Ended and sealed: nothing will ever be done to it here again. The
      // mark is made after meta.json says so, and a seal's `sealing` mark
      // is there from before its meta.json is final until its end; best
      // effort (a read-only state directory parses it each time).
      int fd = static_cast<int>(GUARD_EINTR_RETRY(
          ::open((dir + "/" + kSealedMark).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)));
      if (fd >= 0) ::close(fd);
      continue;
    }
    if (!root.empty() && meta.root != root) continue;
    // Sealed, but its sealer died before the end checkpoint (deferred_seal.h).
    if (meta.state != SessionState::kRunning && SealMarked(dir) && CompleteLeftSeal(dir, recovered_hook, id)) {
      RecoveryReport completed;
      completed.id = id;
      completed.seal_completed = true;
      reports->push_back(std::move(completed));
      continue;
    }
    if (meta.state != SessionState::kRunning || SupervisorAlive(meta)) continue;
    RecoveryReport report;
    bool recovered = false;
    Status s = RecoverSession(state, id, &recovered, &report);
    if (!s.ok()) {
      if (first.ok()) first = Status::IOError("recovering session " + id + ": " + s.ToString());
      continue;
    }
    if (!recovered) continue;
    reports->push_back(std::move(report));
    if (recovered_hook != nullptr) recovered_hook(id);
  }
  return first;
}

void PrintRecoveryReport(const RecoveryReport& r) {
  if (r.seal_completed) {
    std::fprintf(stderr, "guard: finished the seal of session %s (its guard was killed after it had recorded the "
                 "session's end)\n", r.id.c_str());
    return;
  }
  if (r.half_made_removed) {
    std::fprintf(stderr, "guard: removed session %s: its start was cut short (a full state directory?) before it "
                 "recorded anything\n", r.id.c_str());
    return;
  }
  // For the user: what was saved and what to run next. The store's own
  // bookkeeping (pending blobs resolved, copies removed) is not theirs.
  std::fprintf(stderr,
               "guard: recovered session %s, whose guard had stopped: %zu path%s it changed, %s end state%s "
               "recorded (%.2f s)\n",
               r.id.c_str(), r.final_states, r.final_states == 1 ? "" : "s", r.final_states == 1 ? "its" : "their",
               r.final_states == 1 ? "" : "s", r.seconds);
  if (r.dropped_bytes > 0) {
    std::fprintf(stderr,
                 "guard:   its journal's last write was cut short: %llu torn journal byte%s dropped (every whole "
                 "record is kept)\n",
                 static_cast<unsigned long long>(r.dropped_bytes), r.dropped_bytes == 1 ? "" : "s");
  }
  if (r.unrecorded_kept > 0) {
    std::fprintf(stderr,
                 "guard:   %zu saved cop%s of files no record names kept (`guard show --session %s` lists them)\n",
                 r.unrecorded_kept, r.unrecorded_kept == 1 ? "y" : "ies", r.id.c_str());
  }
  if (r.caught_up > 0) {
    std::fprintf(stderr, "guard:   %zu change%s made after guard's last look at the tree recorded as the session's\n",
                 r.caught_up, r.caught_up == 1 ? "" : "s");
  }
  if (r.caught_up_after_end > 0) {
    std::fprintf(stderr,
                 "guard:   %zu path%s changed after the session's processes were stopped: not recorded as its "
                 "work (what it did to %s after guard's last look was not saved)\n",
                 r.caught_up_after_end, r.caught_up_after_end == 1 ? "" : "s",
                 r.caught_up_after_end == 1 ? "it" : "them");
  }
  if (r.kept_saved > 0) {
    std::fprintf(stderr,
                 "guard:   %zu path%s changed after the session ended: the session's end is its saved work "
                 "(`guard replay --session %s` puts it back)\n",
                 r.kept_saved, r.kept_saved == 1 ? "" : "s", r.id.c_str());
  }
  if (r.end_not_saved > 0) {
    std::fprintf(stderr,
                 "guard:   %zu path%s changed after the session ended before guard had saved the session's "
                 "last work on %s: the end recorded is the tree's\n",
                 r.end_not_saved, r.end_not_saved == 1 ? "" : "s", r.end_not_saved == 1 ? "it" : "them");
  }
  if (r.staged_removed > 0) {
    std::fprintf(stderr, "guard:   %zu file%s staged by the interrupted restore removed\n", r.staged_removed,
                 r.staged_removed == 1 ? "" : "s");
  }
  for (const std::string& p : r.problems) std::fprintf(stderr, "guard:   journal damage: %s\n", p.c_str());
  if (!r.incomplete.empty()) std::fprintf(stderr, "guard:   %s\n", r.incomplete.c_str());
  std::fprintf(stderr,
               "guard:   next: `guard status` says whether its work is in the tree; `guard diff --session %s` "
               "shows it, `guard replay --session %s` re-applies it\n",
               r.id.c_str(), r.id.c_str());
}

bool InsideGuardSession() {
  const char* s = std::getenv(GUARD_ENV_SESSION);
  return s != nullptr && *s != '\0';
}

void RecoverBeforeCommand(const std::string& root, bool quiet, bool wait_for_seals) {
  if (InsideGuardSession()) return;
  StateDir state;
  if (!StateDir::Open(&state).ok()) return;  // the command itself reports it
  if (wait_for_seals) WaitForSeals(state, root, SealWait{.quiet = quiet});
  std::vector<RecoveryReport> reports;
  Status s = RecoverOrphans(state, root, &reports);
  if (quiet) return;
  for (const RecoveryReport& r : reports) PrintRecoveryReport(r);
  if (!s.ok()) std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
}

}  // namespace guard
