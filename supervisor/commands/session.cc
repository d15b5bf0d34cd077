#include "supervisor/commands/session.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "supervisor/base/units.h"
#include "supervisor/base/version.h"
#include "supervisor/session/orphan_pending.h"
#include "supervisor/session/recovery.h"
#include "supervisor/session/ring_barrier.h"
#include "supervisor/commands/auto_gc.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/commands/doctor_probes.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/commands/running_session.h"
#include "supervisor/commands/watch_setup.h"
#include "supervisor/git/baseline_objects.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/trace/front_process.h"
#include "supervisor/trace/signal_relay.h"
#include "supervisor/trace/signal_scope.h"
#include "supervisor/trace/tracee_views.h"

namespace guard {
namespace {

// Whether ptrace is refused here: a child of ours cannot be traced
// (doctor_probes.h), or the test hook GUARD_TEST_REFUSE_PTRACE=1 says so
// (tests of the fallback, on machines that allow it).
bool PtraceRefused(std::string* why) {
  if (const char* hook = std::getenv("GUARD_TEST_REFUSE_PTRACE"); hook != nullptr && std::strcmp(hook, "1") == 0) {
    *why = "GUARD_TEST_REFUSE_PTRACE=1, a test hook";
    return true;
  }
  Finding f = ProbePtrace();
  *why = f.detail;
  return !f.ok;
}


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

// The fd number the command's inbox is inherited at: high, below the
// usual soft limit of open files, so that a program opening files in
// order does not reach it (a program that closes it has no inbox, and the
// tracer takes its calls).
int InboxFdNumber() {
  struct rlimit rl {};
  rlim_t limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
  if (limit == RLIM_INFINITY || limit > 1024) limit = 1024;
  return limit > 16 ? static_cast<int>(limit) - 5 : 10;
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
  watching_ = options_.mode == "watch";
  if (options_.mode == "auto") {
    // Where ptrace is refused (some containers and CI sandboxes) the shim
    // captures alone and watch mode is its net: what the shim cannot see
    // (a raw system call, a static program) is seen after it happened.
    std::string why;
    if (PtraceRefused(&why)) {
      watching_ = true;
      alone_ = FindShim(&shim_path_).ok();
      net_ = alone_;
      const std::string how = net_ ? "the preload shim captures, with watch mode as its net for what it cannot see"
                                   : "watch mode captures (no shim found)";
      std::fprintf(stderr, "guard: ptrace is not allowed here (%s): %s (docs/capture.md, \"The net\")\n",
                   EscapeForTerminal(why).c_str(), how.c_str());
    }
  }
  if (alone_ && !net_) {
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
  // A previous session of this root still being sealed is waited for
  // (deferred_seal.h): its seal reads its end states from the tree, which
  // this session's command is about to change.
  RecoverBeforeCommand(root_, options_.quiet);
  std::string previous;
  if (!options_.quiet && SelectSession(state_, "last", root_, &previous).ok()) {
    // Its meta.json says how it ended; its journal is read only when the
    // summary needs it (a session's start reads no other's log).
    SessionMeta last;
    SessionHistory history;
    if (LoadSessionMeta(state_.session_dir(previous) + "/meta.json", &last).ok() && EndedAbnormally(last) &&
        SessionHistory::Load(state_, previous, &history).ok()) {
      std::fputs(ReconnectSummary(history).c_str(), stderr);
    }
  }
}

// The session's directory and meta.json, which names the shim's ring.
int Session::CreateRecord() {
  Status s = CreateRunningSession(state_.sessions_dir(), root_, options_.argv, state_path_, &meta_, &session_dir_);
  if (!s.ok()) return Fail(s.ToString());
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
  log_->info("capture mode {}", net_      ? "auto without ptrace (the shim, watch mode as its net)"
                                : watching_ ? "watch (changes seen after they happen)"
                                : alone_  ? "preload (the shim alone)"
                                : use_shim_ ? "auto (shim and tracer)"
                                            : "trace");
  if (alone_ && !SignalScopeAvailable()) {
    log_->info("no Landlock scopes in this kernel (Linux 6.12): the command can signal guard (docs/security.md)");
  }
  const std::chrono::nanoseconds sync_every(options_.sync_every_ns);
  if (options_.sync_every_ns != kSyncEveryDefaultNs) log_->info("durable every {} ms", options_.sync_every_ns / 1000000);
  commit_.emplace(recorder.journal(), store_.get(), [&saver](uint64_t durable) { saver.OnDurable(durable); },
                  sync_every);
  return watching_ ? OpenWatch() : 0;
}

int Session::MakeSpec(LaunchSpec* out) {
  LaunchSpec spec = CommandSpec(options_.argv, &filter_, meta_, root_, use_shim_, shim_, config_dir_);
  // With the shim, the state directory is what a call from its stub could
  // reach past the tracer (docs/security.md): it is hidden where it can be.
  // A state directory that is a mount of its own keeps the inbox in it
  // (state_dir.h): it cannot be hidden then.
  const bool can_hide = !state_.inbox_inside();
  // Watch mode has no tracer to refuse a call on the state directory: it
  // is hidden as under the shim (docs/security.md).
  const bool hides = use_shim_ || watching_;
  if (hides && options_.hide_state != "off" && !can_hide) {
    log_->warn("the state directory is a mount of its own: it is not hidden from the command");
    if (options_.hide_state == "required") {
      return Fail("hide_state = \"required\", but the state directory " + state_path_ +
                  " is a mount of its own (docs/security.md)");
    }
  }
  if (hides && options_.hide_state != "off" && can_hide) {
    spec.hide_state_dir = state_path_;
    spec.hide_state_required = options_.hide_state == "required";
    // Made now if missing, so that the command cannot create a config.toml
    // there either.
    if (!config_dir_.empty() && MakeDirs(config_dir_, 0700).ok()) spec.hide_also_dir = config_dir_;
    // No other session's ring in the command's /dev/shm (docs/security.md),
    // unless a place the command needs is there.
    private_shm_ = use_shim_;
    for (const std::string* p : {&root_, &state_path_, &config_dir_}) {
      if (PathIsUnder(*p, "/dev/shm")) private_shm_ = false;
    }
    if (private_shm_) spec.hide_ring = shim_.segment.name();
    // Under the tracer, no other session's inbox either: the command's own
    // is an fd it inherits (docs/security.md, "Sessions apart"). Not under
    // preload, where a process that closed the fd would have nobody to
    // take its calls.
    if (!alone_) {
      spec.hide_inbox_root = state_.inbox_root();
      spec.own_inbox = inbox_;
      spec.inbox_fd = InboxFdNumber();
      spec.env_overrides.push_back(EnvEntry(GUARD_ENV_SHIM_INBOX_FD, std::to_string(spec.inbox_fd)));
    }
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
  if (alone_ || watching_) {
    MarkListener::Hooks hooks;
    if (net_) {
      // Both producers' barriers: the ring drained, then the tree compared.
      hooks.barrier = [this] {
        GUARD_RETURN_IF_ERROR(WaitForRingDelivered(&*feed_, &capture_mu_, std::chrono::seconds(10)));
        return watch_->Barrier();
      };
      hooks.mark = [this](pid_t pid, std::string_view label, bool step) { return fed_sink_->Mark(pid, label, step); };
    } else if (alone_) {
      // The barrier: the ring drained past the request; the mark through
      // the feed's lock, as a traced mark would be.
      hooks.barrier = [this] { return WaitForRingDelivered(&*feed_, &capture_mu_, std::chrono::seconds(10)); };
      hooks.mark = [this](pid_t pid, std::string_view label, bool step) { return fed_sink_->Mark(pid, label, step); };
    } else {
      // The barrier: every change made before the request saved and
      // recorded (WatchSession::Barrier); the mark under the capture lock.
      hooks.barrier = [this] { return watch_->Barrier(); };
      hooks.mark = [this](pid_t pid, std::string_view label, bool step) {
        std::lock_guard<std::mutex> lock(capture_mu_);
        return capture_->Mark(pid, label, step);
      };
    }
    ListenForMarks(std::move(hooks));
    StartKeeper();
    launched_ = untraced_->Start(spec);
    if (launched_.ok()) {
      IsolationWent(untraced_->isolation(), untraced_->pid());
      KeepSession(untraced_->pid());
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

// Without the tracer, `guard mark` reaches the supervisor over a socket;
// a mark is answered once the barrier has returned (every change made
// before it recorded), so that `guard undo --to MARK` is exact. Watch mode
// gives its own barrier: everything changed before now saved.
void Session::ListenForMarks(MarkListener::Hooks hooks) {
  if (Status s = marks_.emplace(std::move(hooks), log_).Start(); !s.ok()) {
    log_->warn("no marks without the tracer: {}", s.ToString());
    marks_.reset();
  }
}

// Without the tracer nothing would stop what the command started if guard
// died: the keeper does (session/session_keeper.h).
void Session::StartKeeper() {
  const int64_t start = MonoNowNs();
  if (Status s = SessionKeeper::Start(session_dir_ + "/alive", &keeper_); !s.ok()) {
    log_->warn("no keeper: {}; if guard dies, what the command started runs on", s.ToString());
    return;
  }
  log_->info("keeper {} started in {} us", keeper_->pid(), (MonoNowNs() - start) / 1000);
}

void Session::KeepSession(pid_t pid) {
  if (keeper_ == nullptr) return;
  if (keeper_->Keep(pid)) {
    log_->info("if guard dies, the keeper stops every process of the session's user namespace");
  } else {
    log_->warn("the command shares guard's user namespace: if guard dies, only its first process stops");
  }
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
  if (watch_) watch_->Start();
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
  if (launched_.ok()) {
    launched_ = alone_ || watching_ ? untraced_->Run(&status_) : tracer_->Run(child_.get(), &status_);
  }
  // Every process of the session has ended: nothing is left to stop.
  if (keeper_ != nullptr) keeper_->Release();
  checkpoints_->Stop();
  if (marks_) marks_->Stop();
  // Every process has ended: the last changes are compared and recorded
  // before the work saver's last round and the seal.
  if (watch_) {
    if (Status s = watch_->Stop(); !s.ok()) log_->warn("watch: the last round: {}", s.ToString());
    // Every pre-image the session needed is in the store now.
    git_baseline_.Unpin(*log_);
    log_->info("watch: {} changes in {} rounds ({} full rescans)", watch_->changes(), watch_->rounds(),
               watch_->rescans());
  }
  // Every process has ended: what the shim left in the ring is drained
  // before the work saver's last round and the seal.
  if (use_shim_) {
    feed_->Stop();
    feed_->EmptyInbox();
    log_->info("the shim reported {} calls ({} malformed records)", feed_->calls(), feed_->malformed());
  }
}

int Session::ExitCode() const {
  if (!launched_.ok()) return launched_.IsNotFound() ? 127 : 126;
  return EndOf(status_).code;
}

void Session::HandBack() {
  ran_ns_ = MonoNowNs();
  // Before the caller can run another guard command: it waits for this
  // seal, or completes it if this process dies (deferred_seal.h).
  if (Status s = SealInProgress::Begin(session_dir_, &sealing_); !s.ok()) {
    log_->error("marking the session as being sealed: {}", s.ToString());
  }
  const bool started = launched_.ok();
  if (!started) {
    Fail(launched_.ToString());
    log_->error("the command could not be started or traced: {}", launched_.ToString());
  }
  // Once the front has gone, the terminal is the user's again: say nothing.
  // A command that never started has had its one line. What the seal will
  // find (the files whose end differs from their start) is not known yet:
  // the line counts the paths the session's calls touched.
  // The cap's pass before the front goes: once it has, what the cap says
  // reaches only guard.log (a session shorter than the saver's tick never
  // had one).
  if (cap_ && !link_->released()) cap_->Check();
  if (!options_.quiet && !link_->released() && started) {
    PrintSessionEndLine(meta_.id, recorder_->touched_count(), capture_->refused(), capture_->not_captured(), baseline_,
                        recorder_->meta());
  }
  link_->CommandEnded(ExitCode(), 0);  // the front exits with it (no-op if it has already)
  if (link_->active()) {
    // Out of the caller's job and terminal: a hangup or Ctrl-C meant for
    // what the user runs next does not cut the seal short.
    (void)setsid();
  }
  handed_back_ns_ = MonoNowNs();
  struct rusage self {};
  getrusage(RUSAGE_SELF, &self);
  handed_back_cpu_us_[0] = static_cast<int64_t>(self.ru_utime.tv_sec) * 1000000 + self.ru_utime.tv_usec;
  handed_back_cpu_us_[1] = static_cast<int64_t>(self.ru_stime.tv_sec) * 1000000 + self.ru_stime.tv_usec;
  log_->info("the command's status went back to the caller {:.3f} ms after its end; sealing",
             static_cast<double>(handed_back_ns_ - ran_ns_) / 1e6);
  SealTestPause("start");
}

int Session::Seal() {
  saver_->Stop();
  // The cap's last pass, on what the saver's last round stored: it binds
  // whatever the number of its ticks, before the seal writes the end states.
  if (cap_) cap_->Check();
  Status commit_status = commit_->Stop();
  if (!commit_status.ok()) log_->error("group commit: {}", commit_status.ToString());

  CommandEnd end = EndOf(status_);
  SessionState end_state = end.state;
  int code = ExitCode(), sig = end.sig;
  if (!launched_.ok()) {
    end_state = SessionState::kFinished;
    sig = 0;
  }
  log_->info("command ended: exit {} signal {}; {} seccomp stops, {} exit stops", code, sig,
             tracer_->seccomp_stops(), tracer_->exit_stops());
  // Pre-images of the shim no record names are kept by the seal (orphan_pending.h).
  if (use_shim_) {
    const std::vector<std::string_view> noted = recorder_->NotedPending();
    KeepUnnamedShimPending(
        store_.get(), meta_.id,
        [&noted](std::string_view name) { return std::binary_search(noted.begin(), noted.end(), name); },
        &*recorder_, log_.get());
  }
  int64_t seal_start = MonoNowNs();
  Status seal = recorder_->Seal(end_state, code, sig, 0, &*saver_);
  int64_t seal_ns = MonoNowNs() - seal_start;
  WorkSaver& saver = *saver_;
  log_->info("sealed in {:.3f} s; {} post-images saved while the session ran ({} waited for the ring's reports, "
             "{} of them dropped; {} ticks in a burst held {} polls back); end states: {} from post-images, {} read "
             "from the tree; {} files changed",
             static_cast<double>(seal_ns) / 1e9, saver.saved(), saver.late_deferred(), saver.late_dropped(),
             saver.burst_ticks(), saver.burst_held(), saver.seal_reused(), saver.seal_read(),
             recorder_->changed_count());
  if (!seal.ok()) {
    Fail("sealing the session: " + seal.ToString());
    log_->error("sealing the session: {}", seal.ToString());
  }
  // The session's end as a commit on refs/guard/<id>, when the root is in
  // a git work tree; written by this untraced process, so it is no part of
  // any session and no undo removes it. Its pack is kept from a `git gc`
  // until the ref names it (object_pack.h).
  SealTestPause("checkpoint");
  WriteEndCheckpoint(meta_.id, options_.quiet || link_->released());
  // The store may now be over the retention policy: a detached gc sees to
  // it, without holding up the user's shell.
  if (options_.auto_gc) {
    long held_us = StartAutomaticGc(state_path_);
    log_->info("automatic gc check started ({} us)", held_us);
  }
  WriteStats(seal_ns);
  // A seal that failed leaves the mark: the next command completes it.
  if (seal.ok()) sealing_.End();
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
      if (watch_) {
        std::fprintf(f, "watch_changes %llu\nwatch_rounds %llu\nwatch_rescans %llu\n",
                     static_cast<unsigned long long>(watch_->changes()),
                     static_cast<unsigned long long>(watch_->rounds()),
                     static_cast<unsigned long long>(watch_->rescans()));
        std::fprintf(f, "baseline_files %llu\nbaseline_directories %llu\nbaseline_bytes %llu\n"
                     "baseline_name_only %llu\nbaseline_ns %lld\n",
                     static_cast<unsigned long long>(baseline_.files),
                     static_cast<unsigned long long>(baseline_.directories),
                     static_cast<unsigned long long>(baseline_.bytes_saved),
                     static_cast<unsigned long long>(baseline_.name_only), static_cast<long long>(baseline_ns_));
        std::fprintf(f, "baseline_cloned %llu\nbaseline_kept %llu\n",
                     static_cast<unsigned long long>(baseline_.cloned), static_cast<unsigned long long>(baseline_.kept));
      }
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
      const long long user_us = static_cast<long long>(self.ru_utime.tv_sec) * 1000000 + self.ru_utime.tv_usec;
      const long long system_us = static_cast<long long>(self.ru_stime.tv_sec) * 1000000 + self.ru_stime.tv_usec;
      std::fprintf(f, "seal_ns %lld\nmaxrss_kb %ld\nvoluntary_switches %ld\ninvoluntary_switches %ld\n"
                   "user_us %lld\nsystem_us %lld\n",
                   static_cast<long long>(seal_ns), self.ru_maxrss, self.ru_nvcsw, self.ru_nivcsw, user_us, system_us);
      // The deferred seal (deferred_seal.h): from the end of the session's
      // last process to the caller's status (handback_ns), then the seal
      // after it, its time and guard's CPU time in it.
      std::fprintf(f, "handback_ns %lld\ndeferred_seal_ns %lld\ndeferred_user_us %lld\ndeferred_system_us %lld\n",
                   static_cast<long long>(handed_back_ns_ - ran_ns_),
                   static_cast<long long>(MonoNowNs() - handed_back_ns_),
                   user_us - static_cast<long long>(handed_back_cpu_us_[0]),
                   system_us - static_cast<long long>(handed_back_cpu_us_[1]));
      // What this process waited for: the command and everything it
      // started (the tracer reaps them all), for the whole tree's CPU time.
      struct rusage children {};
      getrusage(RUSAGE_CHILDREN, &children);
      std::fprintf(f, "children_user_us %lld\nchildren_system_us %lld\n",
                   static_cast<long long>(children.ru_utime.tv_sec) * 1000000 + children.ru_utime.tv_usec,
                   static_cast<long long>(children.ru_stime.tv_sec) * 1000000 + children.ru_stime.tv_usec);
      std::fclose(f);
    }
  }
}

}  // namespace guard
