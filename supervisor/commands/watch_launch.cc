#include "supervisor/commands/watch_launch.h"
#include "supervisor/commands/running_session.h"
#include "supervisor/commands/watch_setup.h"
#include "supervisor/session/watch_baseline.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

#include "common/blob_store.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/journal_writer.h"
#include "common/path_util.h"
#include "common/session_history.h"
#include "common/session_meta.h"
#include "common/shim_interface.h"
#include "common/state_dir.h"
#include "supervisor/base/config.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/session_logger.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/base/units.h"
#include "supervisor/base/version.h"
#include "supervisor/capture/capture.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/commands/auto_gc.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/commands/command_group.h"
#include "supervisor/commands/git_kept_content.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/git/checkpoint_timer.h"
#include "supervisor/session/deferred_seal.h"
#include "supervisor/session/group_commit.h"
#include "supervisor/session/mark_listener.h"
#include "supervisor/session/recovery.h"
#include "supervisor/session/session_cap.h"
#include "supervisor/session/session_keeper.h"
#include "supervisor/session/work_saver.h"
#include "supervisor/watch/watch_session.h"

namespace guard {
namespace {

std::string EnvEntryOf(const char* name, const std::string& value) { return std::string(name) + "=" + value; }

int Fail(const std::string& msg, int code = kExitGuardError) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return code;
}

// The places of a session, found before any session is made.
struct Places {
  std::string root;
  StateDir state;
  std::string state_path;  // canonical
  std::string config_dir;  // canonical, or "" without a configuration file
};

int FindPlaces(const RunCommand::Options& options, Places* p) {
  Status s = options.recorded_root ? ResolveRecordedRoot(options.root, &p->root) : FindRoot(options.root, &p->root);
  if (!s.ok()) return Fail(s.ToString(), 2);
  if (s = StateDir::Open(&p->state); !s.ok()) return Fail("state directory: " + s.ToString());
  char real[PATH_MAX];
  if (realpath(p->state.path().c_str(), real) == nullptr) return Fail(p->state.path() + ": " + std::strerror(errno));
  p->state_path = real;
  if (std::string file = ConfigPath(); !file.empty()) {
    p->config_dir = ParentDir(file);
    if (realpath(p->config_dir.c_str(), real) != nullptr) p->config_dir = real;
  }
  if (PathIsUnder(p->root, p->state_path)) {
    return Fail("the root " + p->root + " lies inside guard's state directory " + p->state_path, 2);
  }
  return 0;
}

// A session of this root whose guard died is completed first; if the
// previous one ended abnormally, say so and how to get its work back.
void ReportPrevious(const RunCommand::Options& options, const Places& p) {
  RecoverBeforeCommand(p.root, options.quiet);
  std::string previous;
  if (options.quiet || !SelectSession(p.state, "last", p.root, &previous).ok()) return;
  SessionMeta last;
  SessionHistory history;
  if (LoadSessionMeta(p.state.session_dir(previous) + "/meta.json", &last).ok() && EndedAbnormally(last) &&
      SessionHistory::Load(p.state, previous, &history).ok()) {
    std::fputs(ReconnectSummary(history).c_str(), stderr);
  }
}

struct CommandEnd {
  int code = 0;
  int sig = 0;
  SessionState state = SessionState::kFinished;
};

CommandEnd EndOf(const Status& launched, int status) {
  CommandEnd e;
  if (!launched.ok()) {
    e.code = launched.IsNotFound() ? 127 : 126;
  } else if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.sig = WTERMSIG(status);
    e.code = 128 + e.sig;
    const bool crash = e.sig == SIGSEGV || e.sig == SIGBUS || e.sig == SIGABRT || e.sig == SIGILL ||
                       e.sig == SIGFPE || e.sig == SIGSYS || e.sig == SIGTRAP;
    e.state = crash ? SessionState::kCrashed : SessionState::kKilled;
  }
  return e;
}

// The session, from its record to its seal. Members in the order they are
// made, so that they go in the reverse.
class WatchLaunch {
 public:
  WatchLaunch(const RunCommand::Options& options, const WatchPlatform& platform, Places places)
      : options_(options), platform_(platform), p_(std::move(places)) {}

  int Prepare();
  void Run();
  int Seal();
  const std::string& id() const { return meta_.id; }

 private:
  int OpenWatch();
  void StartMarks();
  void Say();

  const RunCommand::Options& options_;
  const WatchPlatform& platform_;
  Places p_;
  SessionMeta meta_;
  std::string session_dir_, meta_path_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<BlobStore> store_;
  std::optional<SessionCap> cap_;
  std::optional<Recorder> recorder_;
  std::optional<WorkSaver> saver_;
  std::optional<Capture> capture_;
  std::mutex capture_mu_;
  std::optional<GroupCommit> commit_;
  // The baseline keeps a clean tracked file of a git work tree by its blob
  // id (commands/git_kept_content.h); before watch_, which uses it.
  GitBaseline git_baseline_;
  std::optional<WatchSession> watch_;
  BaselineSummary baseline_;
  std::optional<CheckpointTimer> checkpoints_;
  std::optional<MarkListener> marks_;
  std::unique_ptr<SessionKeeper> keeper_;
  CommandGroup command_;
  Status launched_;
  int status_ = 0;
  SealInProgress sealing_;
};

int WatchLaunch::Prepare() {
  Status s = CreateRunningSession(p_.state.sessions_dir(), p_.root, options_.argv, p_.state_path, &meta_,
                                  &session_dir_);
  if (!s.ok()) return Fail(s.ToString());
  meta_path_ = session_dir_ + "/meta.json";
  if (s = SaveSessionMeta(meta_path_, meta_); !s.ok()) return Fail(s.ToString());
  log_ = MakeSessionLogger(session_dir_, meta_.id);
  if (s = BlobStore::Open(p_.state.store_dir(), &store_); !s.ok()) return Fail("blob store: " + s.ToString());
  store_->SetPendingOwner(meta_.id);
  store_->SetCompress(false);  // gc compresses afterwards (docs/gc.md)
  std::unique_ptr<JournalWriter> journal;
  if (s = JournalWriter::Create(session_dir_ + "/journal", &journal); !s.ok()) return Fail("journal: " + s.ToString());
  Recorder& recorder = recorder_.emplace(meta_, meta_path_, std::move(journal), store_.get(), log_);
  WorkSaver& saver = saver_.emplace(p_.root, &recorder, session_dir_ + "/alive", log_, WorkSaver::Timing{});
  if (options_.max_bytes > 0) {
    SessionCap& cap = cap_.emplace(p_.state_path, options_.max_bytes, store_.get(), &recorder, log_);
    store_->SetObserver(&cap);
    recorder.SetAppendHook([&cap](const Record& r) { cap.Saw(r); });
    saver.SetTickHook([&cap] { cap.Check(); });
  }
  CaptureConfig config;
  config.root = p_.root;
  config.state_dir = p_.state_path;
  config.config_dir = p_.config_dir;
  config.on_failure = options_.on_failure;
  capture_.emplace(config, &recorder, log_, &saver);
  log_->info("capture mode watch (changes seen after they happen), without a tracer or a front process");
  commit_.emplace(recorder.journal(), store_.get(), [&saver](uint64_t durable) { saver.OnDurable(durable); },
                  std::chrono::nanoseconds(options_.sync_every_ns));
  return OpenWatch();
}

// The source's watches first, then the baseline: a change made while the
// baseline is read is in it or queued as an event.
int WatchLaunch::OpenWatch() {
  WatchedTreeOptions options;
  bool by_git = true;
  if (Status s = WatchOptionsFromEnv(p_.root, {p_.state_path, p_.config_dir}, &options, &by_git); !s.ok()) {
    return Fail(s.message());
  }
  if (by_git) git_baseline_.Open(p_.root, p_.state_path, meta_.id, *log_, &options);
  std::unique_ptr<WatchSource> source;
  if (Status s = platform_.open_source(p_.root, options.excluded, &source); !s.ok()) {
    return Fail("mode watch: " + s.ToString());
  }
  Capture* capture = &*capture_;
  std::mutex* mu = &capture_mu_;
  WatchSession::Sink sink = [capture, mu](const ObservedChange& change) {
    std::lock_guard<std::mutex> lock(*mu);
    return capture->Observed(change);
  };
  WatchSession& watch = watch_.emplace(options, store_.get(), std::move(sink), log_, WatchSession::Timing{});
  const int64_t start = MonoNowNs();
  if (Status s = watch.Prepare(std::move(source), &baseline_); !s.ok()) {
    return Fail("mode watch: baseline: " + s.ToString());
  }
  // On disk too, as Session::OpenWatch does: recovery's catch-up compares
  // the tree with it if guard dies (session/watch_catch_up.h).
  if (Status s = WriteWatchBaseline(session_dir_ + "/watch_baseline", watch.tree(), options.excluded); !s.ok()) {
    log_->warn("watch: the baseline's file: {}; if guard dies, what changed after its last round is lost",
               s.ToString());
  }
  log_->info("watch: baseline of {} files, {} directories, {} others in {:.3f} s ({} read; {} files kept by name "
             "only; {} unreadable)",
             baseline_.files, baseline_.directories, baseline_.others,
             static_cast<double>(MonoNowNs() - start) / 1e9, FormatSize(baseline_.bytes_saved), baseline_.name_only,
             baseline_.unreadable);
  LogBaselineWithoutCopy(*log_, baseline_);
  return 0;
}

// A mark is answered once every change made before it is recorded
// (WatchSession::Barrier), so that `guard undo --to MARK` is exact.
void WatchLaunch::StartMarks() {
  MarkListener::Hooks hooks;
  hooks.barrier = [this] { return watch_->Barrier(); };
  hooks.mark = [this](pid_t pid, std::string_view label, bool step) {
    std::lock_guard<std::mutex> lock(capture_mu_);
    return capture_->Mark(pid, label, step);
  };
  if (Status s = marks_.emplace(std::move(hooks), log_).Start(); !s.ok()) {
    log_->warn("no marks: {}", s.ToString());
    marks_.reset();
  }
}

void WatchLaunch::Run() {
  checkpoints_.emplace(p_.state, meta_.id, std::chrono::nanoseconds(options_.checkpoint_every_ns), log_);
  StartMarks();
  if (Status s = SessionKeeper::Start(session_dir_ + "/alive", &keeper_); !s.ok()) {
    log_->warn("no keeper: {}; if guard dies, what the command started runs on", s.ToString());
  }
  log_->info("root {}; command {}", p_.root, options_.argv[0]);
  launched_ = command_.Start(options_.argv, {EnvEntryOf(GUARD_ENV_SESSION, meta_.id),
                                            EnvEntryOf(GUARD_ENV_ROOT, p_.root)});
  if (launched_.ok()) {
    if (keeper_ != nullptr && keeper_->Keep(command_.pid())) {
      log_->info("if guard dies, the keeper stops every process of the command's process group");
    }
    if (Status s = saver_->Start(); !s.ok()) log_->error("work saver: {}", s.ToString());
    if (options_.checkpoint_every_ns > 0) checkpoints_->Start();
    watch_->Start();
    launched_ = command_.Go();
    if (launched_.ok()) launched_ = command_.Wait(&status_);
  }
  // Every process of the group has ended: nothing is left to stop.
  if (keeper_ != nullptr) keeper_->Release();
  checkpoints_->Stop();
  if (marks_) marks_->Stop();
  if (Status s = watch_->Stop(); !s.ok()) log_->warn("watch: the last round: {}", s.ToString());
  git_baseline_.Unpin(*log_);  // every pre-image the session needed is in the store now
  log_->info("watch: {} changes in {} rounds ({} full rescans)", watch_->changes(), watch_->rounds(),
             watch_->rescans());
}

// The session's one line, as Session::HandBack says it.
void WatchLaunch::Say() {
  if (!launched_.ok()) {
    Fail(launched_.ToString());
    log_->error("the command could not be started: {}", launched_.ToString());
    return;
  }
  if (options_.quiet) return;
  PrintSessionEndLine(meta_.id, recorder_->touched_count(), 0, capture_->not_captured(), baseline_, recorder_->meta());
}

int WatchLaunch::Seal() {
  if (Status s = SealInProgress::Begin(session_dir_, &sealing_); !s.ok()) {
    log_->error("marking the session as being sealed: {}", s.ToString());
  }
  if (cap_) cap_->Check();  // before the end line, as Session::HandBack
  Say();
  saver_->Stop();
  if (cap_) cap_->Check();  // on what the saver's last round stored
  if (Status s = commit_->Stop(); !s.ok()) log_->error("group commit: {}", s.ToString());
  const CommandEnd end = EndOf(launched_, status_);
  log_->info("command ended: exit {} signal {}", end.code, end.sig);
  Status seal = recorder_->Seal(end.state, end.code, end.sig, 0, &*saver_);
  if (!seal.ok()) {
    Fail("sealing the session: " + seal.ToString());
    log_->error("sealing the session: {}", seal.ToString());
  }
  WriteEndCheckpoint(meta_.id, options_.quiet);
  if (options_.auto_gc) log_->info("automatic gc check started ({} us)", StartAutomaticGc(p_.state_path));
  if (seal.ok()) sealing_.End();  // a seal that failed leaves the mark: the next command completes it
  return end.code;
}

}  // namespace

LaunchOutcome LaunchWatchSession(const RunCommand::Options& options, const WatchPlatform& platform) {
  // Nothing here hides the state directory from the command (no mount
  // namespace on macOS: docs/security.md).
  if (options.hide_state == "required") {
    return {Fail("hide_state = \"required\", but this session cannot hide the state directory from the command "
                 "(no mount namespace: docs/security.md)"),
            ""};
  }
  Places places;
  if (int failed = FindPlaces(options, &places); failed != 0) return {failed, ""};
  // The command is looked for before a session is made for it.
  std::string program;
  const char* path = std::getenv("PATH");
  if (Status found = FindOnPath(options.argv[0], path != nullptr ? path : "/usr/bin:/bin", &program); !found.ok()) {
    return {Fail(found.ToString(), 127), ""};
  }
  ReportPrevious(options, places);
  WatchLaunch session(options, platform, std::move(places));
  if (int failed = session.Prepare(); failed != 0) return {failed, session.id()};
  session.Run();
  return {session.Seal(), session.id()};
}

}  // namespace guard
