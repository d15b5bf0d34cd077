#include "supervisor/commands/session.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/blob_store.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/journal_writer.h"
#include "common/path_util.h"
#include "common/session_history.h"
#include "common/session_meta.h"
#include "supervisor/base/config.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/base/session_logger.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/base/version.h"
#include "supervisor/session/orphan_pending.h"
#include "supervisor/session/recovery.h"
#include "supervisor/commands/auto_gc.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/trace/front_process.h"
#include "supervisor/trace/signal_relay.h"
#include "supervisor/trace/tracee_views.h"

namespace guard {
namespace {

int Fail(const std::string& msg, int code = kExitGuardError) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return code;
}

bool IsCrashSignal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGILL || sig == SIGFPE ||
         sig == SIGSYS || sig == SIGTRAP;
}

struct CommandEnd {
  int code = 0;
  int sig = 0;
  SessionState state = SessionState::kFinished;
};

CommandEnd EndOf(int status) {
  CommandEnd e;
  if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.sig = WTERMSIG(status);
    e.code = 128 + e.sig;
    e.state = IsCrashSignal(e.sig) ? SessionState::kCrashed : SessionState::kKilled;
  }
  return e;
}

// The command's launch: its argv, the filter, and the environment that
// names the session (to guard mark and to a nested guard) and carries the
// shim's configuration (shim_launch.h).
LaunchSpec CommandSpec(const std::vector<std::string>& argv, const FilterProgram* filter, const SessionMeta& meta,
                       const std::string& root, bool use_shim, const ShimLaunch& shim,
                       const std::string& config_dir) {
  LaunchSpec spec;
  spec.argv = argv;
  spec.filter = filter;
  // libuv would otherwise carry file writes over io_uring, past the filter;
  // the filter also makes io_uring_setup fail, so this only avoids a retry.
  spec.env_overrides = {"UV_USE_IO_URING=0", EnvEntry(GUARD_ENV_SESSION, meta.id), EnvEntry(GUARD_ENV_ROOT, root)};
  if (use_shim) spec.env_overrides.insert(spec.env_overrides.end(), shim.env.begin(), shim.env.end());
  if (use_shim && !config_dir.empty()) spec.env_overrides.push_back(EnvEntry(GUARD_ENV_CONFIG_DIR, config_dir));
  return spec;
}

}  // namespace

int Session::Prepare() {
  if (int failed = FindPlaces(); failed != 0) return failed;
  ReportPrevious();
  if (int failed = CreateRecord(); failed != 0) return failed;
  return OpenCapture();
}

// The command, the shim it needs under --mode preload, the root, the state
// directory and guard's configuration directory: before any session is made.
int Session::FindPlaces() {
  if (Status found = ResolveCommand(options_.argv[0], &program_); !found.ok()) {
    return Fail(found.ToString(), 127);  // before any session is made for it
  }
  alone_ = options_.mode == "preload";
  if (alone_) {
    if (Status found = FindShim(&shim_path_); !found.ok()) {
      return Fail("mode preload needs the shim: " + found.ToString() + " (--mode trace needs none)");
    }
    if (IsStaticProgram(program_)) {
      std::fprintf(stderr, "guard: warning: --mode preload cannot see %s (statically linked): its changes are not "
                   "captured (--mode auto or trace captures them)\n", EscapeForTerminal(program_).c_str());
    }
  }
  Status s = options_.recorded_root ? ResolveRecordedRoot(options_.root, &root_) : FindRoot(options_.root, &root_);
  if (!s.ok()) return Fail(s.ToString(), 2);
  s = StateDir::Open(&state_);
  if (!s.ok()) return Fail("state directory: " + s.ToString());
  char real[PATH_MAX];
  if (realpath(state_.path().c_str(), real) == nullptr) return Fail(state_.path() + ": " + std::strerror(errno));
  state_path_ = real;
  if (std::string file = ConfigPath(); !file.empty()) {
    config_dir_ = ParentDir(file);
    if (realpath(config_dir_.c_str(), real) != nullptr) config_dir_ = real;
  }
  if (PathIsUnder(root_, state_path_)) {
    return Fail("the root " + root_ + " lies inside guard's state directory " + state_path_, 2);
  }
  return 0;
}

// A session of this root whose guard died is completed first; if the
// previous session ended abnormally, say so and how to get its work back.
void Session::ReportPrevious() {
  RecoverBeforeCommand(root_, options_.quiet);
  std::string previous;
  if (!options_.quiet && SelectSession(state_, "last", root_, &previous).ok()) {
    SessionHistory history;
    if (SessionHistory::Load(state_, previous, &history).ok() && EndedAbnormally(history.meta())) {
      std::fputs(ReconnectSummary(history).c_str(), stderr);
    }
  }
}

// The session's directory and meta.json, which names the shim's ring.
int Session::CreateRecord() {
  Status s = CreateSessionDir(state_.sessions_dir(), &meta_, &session_dir_);
  if (!s.ok()) return Fail(s.ToString());
  meta_.root = root_;
  meta_.argv = options_.argv;
  meta_.started_ns = WallNowNs();
  meta_.state = SessionState::kRunning;
  meta_.supervisor_pid = getpid();
  meta_.supervisor_start_ticks = ProcessStartTicks(getpid());
  meta_.guard_version = kGuardVersion;
  // The first checkpoint's parent: HEAD now, before the command can move it.
  meta_.git_head = GitHeadAt(root_, state_path_);
  id_ = meta_.id;
  link_->SessionCreated(meta_.id);
  if (int failed = ReadyShim(); failed != 0) return failed;
  meta_path_ = session_dir_ + "/meta.json";
  s = SaveSessionMeta(meta_path_, meta_);
  if (!s.ok()) return Fail(s.ToString());
  return 0;
}

// --mode auto: the shim on top of the tracer, when it is installed; under
// --mode preload a shim that cannot be made ready stops the session.
int Session::ReadyShim() {
  use_shim_ = alone_;
  if (options_.mode == "auto") {
    Status found_shim = FindShim(&shim_path_);
    use_shim_ = found_shim.ok();
    if (!use_shim_) {
      early_warning_ = "mode auto without the shim: " + found_shim.ToString() + "; the tracer captures alone";
    }
  }
  // The shim leaves its pre-images in the session's inbox, beside the
  // state directory, which the command may not be able to write at all
  // (state_isolation.h); the feed takes them into the store.
  inbox_ = state_.session_inbox(meta_.id);
  if (use_shim_) {
    if (Status made = state_.MakeSessionInbox(meta_.id); !made.ok()) {
      if (alone_) return Fail("mode preload: inbox: " + made.ToString());
      early_warning_ = "mode auto without the shim: inbox: " + made.ToString() + "; the tracer captures alone";
      use_shim_ = false;
    }
  }
  if (use_shim_) {
    Status ready = PrepareShim(shim_path_, meta_.id, root_, state_path_, inbox_, state_.inbox_root(),
                               options_.on_failure == CaptureFailurePolicy::kAllow, alone_, &shim_);
    if (ready.ok()) {
      meta_.ring = shim_.segment.name();  // recovery drains it if this supervisor dies
    } else if (alone_) {
      return Fail("mode preload: " + ready.ToString());
    } else {
      early_warning_ = "mode auto without the shim: " + ready.ToString() + "; the tracer captures alone";
      use_shim_ = false;
    }
  }
  return 0;
}

// The session's log, the store, the journal, the filter, and capture with
// its producers and the threads that save and commit.
int Session::OpenCapture() {
  log_ = MakeSessionLogger(session_dir_, meta_.id);
  if (!early_warning_.empty()) {
    log_->warn("{}", early_warning_);
    // Capture stays complete, only slower: said once, where the user sees it.
    std::fprintf(stderr, "guard: warning: %s\n", EscapeForTerminal(early_warning_).c_str());
  }
  Status s = BlobStore::Open(state_.store_dir(), &store_);
  if (!s.ok()) return Fail("blob store: " + s.ToString());
  store_->SetPendingOwner(meta_.id);  // recovery tells this session's pending blobs by it
  // What the session stores while it runs is stored raw: zstd took half of
  // the supervisor's time, which the command waited for on two cores. gc compresses
  // it afterwards (common/store_compact.h, docs/gc.md).
  store_->SetCompress(false);
  std::unique_ptr<JournalWriter> journal;
  s = JournalWriter::Create(session_dir_ + "/journal", &journal);
  if (!s.ok()) return Fail("journal: " + s.ToString());

  s = BuildCaptureFilter(&filter_, use_shim_ ? StubAllowance::kShim : StubAllowance::kNone);
  if (!s.ok()) return Fail("seccomp filter: " + s.ToString());

  Recorder& recorder = recorder_.emplace(meta_, meta_path_, std::move(journal), store_.get(), log_);
  CaptureConfig config;
  config.root = root_;
  config.state_dir = state_path_;
  if (use_shim_) config.inbox_dir = state_.inbox_root();
  config.config_dir = config_dir_;
  config.on_failure = options_.on_failure;
  // The session's work, saved while it runs (post-images), and the
  // heartbeat recovery reads the supervisor's death time from.
  WorkSaver& saver = saver_.emplace(root_, &recorder, session_dir_ + "/alive", log_, WorkSaver::Timing{});
  if (options_.max_bytes > 0) {
    // The cap binds inside the session too: its intermediate versions are
    // thinned while the state directory is over it (docs/gc.md).
    SessionCap& cap = cap_.emplace(state_path_, options_.max_bytes, store_.get(), &recorder, log_);
    store_->SetObserver(&cap);
    recorder.SetAppendHook([&cap](const Record& r) { cap.Saw(r); });
    saver.SetTickHook([&cap] { cap.Check(); });
  }
  if (const char* lag = getenv("GUARD_POST_IMAGE_LAG_FILE"); lag != nullptr && *lag != '\0') saver.SetLagFile(lag);
  Capture& capture = capture_.emplace(config, &recorder, log_, &saver);
  ShimFeed& feed = feed_.emplace(&capture, &capture_mu_, meta_.id, log_);
  // Evidence of forgery is the session's to keep (Recorder::NoteIncomplete).
  feed.SetEvidenceHandler([&recorder, this](const std::string& what) {
    if (Status s = recorder.NoteIncomplete(what); !s.ok()) log_->error("recording the evidence: {}", s.ToString());
  });
  fed_sink_.emplace(&capture, &feed, &capture_mu_);
  if (use_shim_) {
    Status ready = feed.Attach(shim_.segment.base(), shim_.segment.size());
    if (ready.ok()) ready = feed.SetInbox(inbox_, store_.get());
    if (!ready.ok() && alone_) return Fail("mode preload: " + ready.ToString());
    if (!ready.ok()) {
      log_->warn("mode auto without the shim: {}; the tracer captures alone", ready.ToString());
      use_shim_ = false;
      // The filter was built for the shim: without it, the stub must be no way past.
      s = BuildCaptureFilter(&filter_, StubAllowance::kNone);
      if (!s.ok()) return Fail("seccomp filter: " + s.ToString());
    }
  }
  if (use_shim_) {
    saver.SetLateCalls([&feed] { return feed.ClaimedPosition(); }, [&feed] { return feed.DeliveredPosition(); });
  }
  log_->info("capture mode {}", alone_ ? "preload (the shim alone)" : use_shim_ ? "auto (shim and tracer)" : "trace");
  const std::chrono::nanoseconds sync_every(options_.sync_every_ns);
  if (options_.sync_every_ns != kSyncEveryDefaultNs) log_->info("durable every {} ms", options_.sync_every_ns / 1000000);
  commit_.emplace(recorder.journal(), store_.get(), [&saver](uint64_t durable) { saver.OnDurable(durable); },
                  sync_every);
  return 0;
}

int Session::MakeSpec(LaunchSpec* out) {
  LaunchSpec spec = CommandSpec(options_.argv, &filter_, meta_, root_, use_shim_, shim_, config_dir_);
  // With the shim, the state directory is what a call from its stub could
  // reach past the tracer (docs/security.md): it is hidden where it can be.
  // A state directory that is a mount of its own keeps the inbox in it
  // (state_dir.h): it cannot be hidden then.
  const bool can_hide = !state_.inbox_inside();
  if (use_shim_ && options_.hide_state != "off" && !can_hide) {
    log_->warn("the state directory is a mount of its own: it is not hidden from the command");
    if (options_.hide_state == "required") {
      return Fail("hide_state = \"required\", but the state directory " + state_path_ +
                  " is a mount of its own (docs/security.md)");
    }
  }
  if (use_shim_ && options_.hide_state != "off" && can_hide) {
    spec.hide_state_dir = state_path_;
    spec.hide_state_required = options_.hide_state == "required";
    // Made now if missing, so that the command cannot create a config.toml
    // there either.
    if (!config_dir_.empty() && MakeDirs(config_dir_, 0700).ok()) spec.hide_also_dir = config_dir_;
    // No other session's ring in the command's /dev/shm (docs/security.md),
    // unless a place the command needs is there.
    private_shm_ = true;
    for (const std::string* p : {&root_, &state_path_, &config_dir_}) {
      if (PathIsUnder(*p, "/dev/shm")) private_shm_ = false;
    }
    if (private_shm_) spec.hide_ring = shim_.segment.name();
    // The shim may then take a name on the root's mount outside the root as
    // outside (capture_path.c): the state directory was no mount of its own
    // (can_hide), so no other name reaches it.
    spec.env_overrides.push_back(EnvEntry(GUARD_ENV_STATE_SEALED, "1"));
  }
  *out = std::move(spec);
  return 0;
}

int Session::Launch() {
  LaunchSpec spec;
  if (int failed = MakeSpec(&spec); failed != 0) return failed;
  log_->info("root {}; command {}", root_, options_.argv[0]);

  tracer_.emplace(use_shim_ ? static_cast<MutationSink*>(&*fed_sink_) : &*capture_, log_);
  tracer_->RecognizeTrees(use_shim_ ? std::vector<std::string>{root_, state_path_, state_.inbox_root()}
                                    : std::vector<std::string>{root_, state_path_});
  if (use_shim_ && !alone_) {
    // What each shim's handshake is held to (trace/shim_hello.h); without
    // it every shim is refused, and the tracer captures alone.
    ShimTruth truth{root_, state_path_, inbox_, state_.inbox_root(), config_dir_, meta_.id, {}, {}, {}};
    if (Status s = IdentifyShimTruth("/dev/shm/" + shim_.segment.name(), &truth); s.ok()) {
      tracer_->ExpectShim(std::move(truth));
    } else {
      log_->warn("the shim's handshake: {}; every shim is refused, the tracer captures alone", s.ToString());
    }
  }
  // The front is guard as much as this process is (signal_call.h).
  if (link_->active()) tracer_->front = getppid();
  untraced_.emplace(log_);
  checkpoints_.emplace(state_, meta_.id, std::chrono::nanoseconds(options_.checkpoint_every_ns), log_);
  if (alone_) {
    launched_ = untraced_->Start(spec);
    if (launched_.ok()) {
      IsolationWent(untraced_->isolation(), untraced_->pid());
      StartedAs(untraced_->pid(), &*untraced_);
      launched_ = untraced_->Go();
    }
  } else {
    launched_ = TracedChild::Start(spec, &child_);
    if (launched_.ok()) {
      IsolationWent(child_->isolation(), child_->pid());
      StartedAs(child_->pid(), &*tracer_);
    }
  }
  return 0;
}

// How the state directory's isolation went: said once, the session goes on.
void Session::IsolationWent(const IsolationOutcome& o, pid_t pid) {
  if (o.isolated) {
    std::string ns;
    if (ReadLinkAt(AT_FDCWD, "/proc/" + std::to_string(pid) + "/ns/mnt", "ns", &ns).ok()) SetSessionNamespace(ns);
    // Its names are guard's but under /dev/shm, which is its own there.
    if (private_shm_ && !alone_) tracer_->SessionHasPrivateShm();
    log_->info("the state directory is read-only for the command (its own user and mount namespace)");
  } else if (o.refused != 0) {
    log_->warn("the state directory is not hidden from the command: user namespaces refused ({})",
               std::strerror(o.refused));
    if (!options_.quiet) {
      std::fprintf(stderr, "guard: warning: the state directory is not hidden from the command (no user "
                   "namespaces here: %s); see docs/security.md\n", strerrorname_np(o.refused));
    }
  }
}

// Once the command runs, traced or not.
template <typename Runner>
void Session::StartedAs(pid_t pid, Runner* runner) {
  InstallSignalRelay(pid);
  // After the command started, which keeps its own signal dispositions.
  if (Status saver_started = saver_->Start(); !saver_started.ok()) {
    log_->error("work saver: {}", saver_started.ToString());
  }
  if (options_.checkpoint_every_ns > 0) checkpoints_->Start();
  if (use_shim_) feed_->Start();
  link_->CommandStarted(pid, static_cast<pid_t>(gettid()));
  if (link_->active()) {
    FrontLink* link = link_;
    runner->on_stop = [link](int sig) { link->CommandStopped(sig); };
    runner->on_continue = [link] { link->CommandContinued(); };
    runner->on_main_end = [this](int main_status, size_t remaining) {
      log_->info("the command's first process ended; {} other process(es) still run", remaining);
      link_->CommandEnded(EndOf(main_status).code, remaining);
    };
  }
}

void Session::Run() {
  if (launched_.ok()) launched_ = alone_ ? untraced_->Run(&status_) : tracer_->Run(child_.get(), &status_);
  checkpoints_->Stop();
  // Every process has ended: what the shim left in the ring is drained
  // before the work saver's last round and the seal.
  if (use_shim_) {
    feed_->Stop();
    feed_->EmptyInbox();
    log_->info("the shim reported {} calls ({} malformed records)", feed_->calls(), feed_->malformed());
  }
}

int Session::Seal() {
  saver_->Stop();
  Status commit_status = commit_->Stop();
  if (!commit_status.ok()) log_->error("group commit: {}", commit_status.ToString());

  CommandEnd end = EndOf(status_);
  SessionState end_state = end.state;
  int code = end.code, sig = end.sig;
  bool started = launched_.ok();
  if (!started) {
    Fail(launched_.ToString());
    log_->error("the command could not be started or traced: {}", launched_.ToString());
    code = launched_.IsNotFound() ? 127 : 126;
    end_state = SessionState::kFinished;
    sig = 0;
  }
  log_->info("command ended: exit {} signal {}; {} seccomp stops, {} exit stops", code, sig,
             tracer_->seccomp_stops(), tracer_->exit_stops());
  // Pre-images of the shim no record names are kept by the seal (orphan_pending.h).
  if (use_shim_) KeepUnnamedShimPending(store_.get(), meta_.id, recorder_->NotedPending(), &*recorder_, log_.get());
  int64_t seal_start = MonoNowNs();
  Status seal = recorder_->Seal(end_state, code, sig, 0, &*saver_);
  int64_t seal_ns = MonoNowNs() - seal_start;
  WorkSaver& saver = *saver_;
  log_->info("sealed in {:.3f} s; {} post-images saved while the session ran ({} waited for the ring's reports, "
             "{} of them dropped; {} ticks in a burst held {} polls back); end states: {} from post-images, {} read "
             "from the tree",
             static_cast<double>(seal_ns) / 1e9, saver.saved(), saver.late_deferred(), saver.late_dropped(),
             saver.burst_ticks(), saver.burst_held(), saver.seal_reused(), saver.seal_read());
  if (!seal.ok()) Fail("sealing the session: " + seal.ToString());
  // Once the front has gone, the terminal is the user's again: say nothing.
  // A command that never started has had its one line.
  if (!options_.quiet && !link_->released() && started) {
    std::string counts;
    if (capture_->refused()) counts += ", " + std::to_string(capture_->refused()) + " changes refused";
    if (capture_->not_captured()) counts += ", " + std::to_string(capture_->not_captured()) + " changes not captured";
    std::fprintf(stderr, "guard: session %s: %zu file%s changed%s\n", meta_.id.c_str(), recorder_->changed_count(),
                 recorder_->changed_count() == 1 ? "" : "s", counts.c_str());
    if (const std::string line = LogIncompleteLine(recorder_->meta()); !line.empty()) {
      std::fprintf(stderr, "guard: session %s: %s\n", meta_.id.c_str(), line.c_str());
    }
  }
  // The session's end as a commit on refs/guard/<id>, when the root is in
  // a git work tree; written by this untraced process, so it is no part of
  // any session and no undo removes it.
  WriteEndCheckpoint(meta_.id, options_.quiet || link_->released());
  // The store may now be over the retention policy: a detached gc sees to
  // it, without holding up the user's shell.
  if (options_.auto_gc) {
    long held_us = StartAutomaticGc(state_path_);
    log_->info("automatic gc check started ({} us)", held_us);
  }
  WriteStats(seal_ns);
  return code;
}

void Session::WriteStats(int64_t seal_ns) {
  if (const char* stats = getenv("GUARD_STATS_FILE"); stats != nullptr && *stats != '\0') {
    if (FILE* f = std::fopen(stats, "we")) {
      std::fprintf(f, "seccomp_stops %llu\nexit_stops %llu\nops %llu\nfiles %zu\npost_images %llu\n",
                   static_cast<unsigned long long>(tracer_->seccomp_stops()),
                   static_cast<unsigned long long>(tracer_->exit_stops()),
                   static_cast<unsigned long long>(recorder_->meta().ops), recorder_->changed_count(),
                   static_cast<unsigned long long>(saver_->saved()));
      std::fprintf(f, "shim_calls %llu\n", static_cast<unsigned long long>(feed_->calls()));
      std::fprintf(f, "shim_hellos %llu\nshim_hellos_refused %llu\n",
                   static_cast<unsigned long long>(tracer_->shim_hellos()),
                   static_cast<unsigned long long>(tracer_->shim_hellos_refused()));
      std::fprintf(f, "saver_burst_ticks %llu\nsaver_burst_held %llu\n",
                   static_cast<unsigned long long>(saver_->burst_ticks()),
                   static_cast<unsigned long long>(saver_->burst_held()));
      // The supervisor's own figures (tools/bench): RUSAGE_SELF, since
      // RUSAGE_CHILDREN would count the traced command too.
      struct rusage self {};
      getrusage(RUSAGE_SELF, &self);
      std::fprintf(f, "seal_ns %lld\nmaxrss_kb %ld\nvoluntary_switches %ld\ninvoluntary_switches %ld\n"
                   "user_us %lld\nsystem_us %lld\n",
                   static_cast<long long>(seal_ns), self.ru_maxrss, self.ru_nvcsw, self.ru_nivcsw,
                   static_cast<long long>(self.ru_utime.tv_sec) * 1000000 + self.ru_utime.tv_usec,
                   static_cast<long long>(self.ru_stime.tv_sec) * 1000000 + self.ru_stime.tv_usec);
      std::fclose(f);
    }
  }
}

}  // namespace guard
