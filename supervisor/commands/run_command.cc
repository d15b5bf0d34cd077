#include "supervisor/commands/run_command.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "common/session_history.h"
#include "common/session_meta.h"
#include "common/state_dir.h"
#include "supervisor/trace/child_launch.h"
#include "supervisor/trace/front_process.h"
#include "supervisor/capture/group_commit.h"
#include "common/clock.h"
#include "common/path_util.h"
#include "supervisor/commands/auto_gc.h"
#include "supervisor/commands/checkpoint_command.h"
#include "supervisor/git/checkpoint.h"
#include "supervisor/git/checkpoint_timer.h"
#include "supervisor/commands/reconnect_summary.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/capture/orphan_pending.h"
#include "supervisor/capture/recovery.h"
#include "supervisor/capture/work_saver.h"
#include "supervisor/base/config.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/root_finder.h"
#include "supervisor/trace/seccomp_filter.h"
#include "supervisor/trace/shim_launch.h"
#include "supervisor/trace/untraced_run.h"
#include "supervisor/capture/shim_feed.h"
#include "supervisor/base/session_logger.h"
#include "supervisor/base/session_selector.h"
#include "supervisor/trace/signal_relay.h"
#include "supervisor/trace/tracee_views.h"
#include "common/file_io.h"
#include "supervisor/trace/tracer.h"
#include "supervisor/base/version.h"

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

// Already inside a guard session: the outer guard captures everything this
// process starts, and a second tracer could not attach anyway.
int ExecDirectly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  return Fail(argv[0] + ": " + std::strerror(errno), errno == ENOENT ? 127 : 126);
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

}  // namespace

int RunCommand::Run() {
  if (options_.argv.empty()) return Fail("no command given (usage: guard [OPTIONS] -- CMD [ARG...])", 2);
  if (const char* outer = getenv("GUARD_SESSION"); outer != nullptr && *outer != '\0') {
    return ExecDirectly(options_.argv);
  }
  // The supervisor runs in a child process (front_process.h), so that this
  // one can return the command's status while the session goes on.
  FrontResult front = RunWithFront(options_.quiet, [this](FrontLink* link) { return RunSupervisor(link); });
  if (!front.session_id.empty()) session_id_ = front.session_id;  // else set in this process
  return front.code;
}

int RunCommand::RunSupervisor(FrontLink* link) {

  std::string program;
  if (Status found = ResolveCommand(options_.argv[0], &program); !found.ok()) {
    return Fail(found.ToString(), 127);  // before any session is made for it
  }
  // --mode preload: the shim alone, without which nothing would capture.
  const bool alone = options_.mode == "preload";
  std::string shim_path;
  if (alone) {
    if (Status found = FindShim(&shim_path); !found.ok()) {
      return Fail("mode preload needs the shim: " + found.ToString() + " (--mode trace needs none)");
    }
    if (IsStaticProgram(program)) {
      std::fprintf(stderr, "guard: warning: --mode preload cannot see %s (statically linked): its changes are not "
                   "captured (--mode auto or trace captures them)\n", EscapeForTerminal(program).c_str());
    }
  }
  std::string root;
  Status s = options_.recorded_root ? ResolveRecordedRoot(options_.root, &root) : FindRoot(options_.root, &root);
  if (!s.ok()) return Fail(s.ToString(), 2);
  StateDir state;
  s = StateDir::Open(&state);
  if (!s.ok()) return Fail("state directory: " + s.ToString());
  char real[PATH_MAX];
  if (realpath(state.path().c_str(), real) == nullptr) return Fail(state.path() + ": " + std::strerror(errno));
  std::string state_path = real;
  // guard's configuration directory, protected as the state directory is:
  // its retention settings decide what gc removes (config.h).
  std::string config_dir;
  if (std::string file = ConfigPath(); !file.empty()) {
    config_dir = ParentDir(file);
    if (realpath(config_dir.c_str(), real) != nullptr) config_dir = real;
  }
  if (PathIsUnder(root, state_path)) {
    return Fail("the root " + root + " lies inside guard's state directory " + state_path, 2);
  }

  // A session of this root whose guard died is completed first; if the
  // previous session ended abnormally, say so and how to get its work back.
  RecoverBeforeCommand(root, options_.quiet);
  std::string previous;
  if (!options_.quiet && SelectSession(state, "last", root, &previous).ok()) {
    SessionHistory history;
    if (SessionHistory::Load(state, previous, &history).ok() && EndedAbnormally(history.meta())) {
      std::fputs(ReconnectSummary(history).c_str(), stderr);
    }
  }

  SessionMeta meta;
  std::string session_dir;
  s = CreateSessionDir(state.sessions_dir(), &meta, &session_dir);
  if (!s.ok()) return Fail(s.ToString());
  meta.root = root;
  meta.argv = options_.argv;
  meta.started_ns = WallNowNs();
  meta.state = SessionState::kRunning;
  meta.supervisor_pid = getpid();
  meta.supervisor_start_ticks = ProcessStartTicks(getpid());
  meta.guard_version = kGuardVersion;
  // The first checkpoint's parent: HEAD now, before the command can move it.
  meta.git_head = GitHeadAt(root, state_path);
  session_id_ = meta.id;  // read by the caller when guard runs as one process
  link->SessionCreated(meta.id);
  // --mode auto: the shim on top of the tracer, when it is installed.
  bool use_shim = alone;
  std::string early_warning;  // for the session's log, made below
  if (options_.mode == "auto") {
    Status found_shim = FindShim(&shim_path);
    use_shim = found_shim.ok();
    if (!use_shim) early_warning = "mode auto without the shim: " + found_shim.ToString() + "; the tracer captures alone";
  }
  ShimLaunch shim;
  // The segment's name goes when this function returns, whichever way; if
  // the supervisor dies instead, recovery drains the segment and removes it.
  struct SegmentRemover {
    const ShimLaunch* shim;
    ~SegmentRemover() {
      if (shim->segment.valid()) (void)RingSegment::Remove(shim->segment.name());
    }
  } remove_segment{&shim};
  // The shim leaves its pre-images in the session's inbox, beside the
  // state directory, which the command may not be able to write at all
  // (state_isolation.h); the feed takes them into the store.
  const std::string inbox = state.session_inbox(meta.id);
  if (use_shim) {
    if (Status made = state.MakeSessionInbox(meta.id); !made.ok()) {
      if (alone) return Fail("mode preload: inbox: " + made.ToString());
      early_warning = "mode auto without the shim: inbox: " + made.ToString() + "; the tracer captures alone";
      use_shim = false;
    }
  }
  if (use_shim) {
    Status ready = PrepareShim(shim_path, meta.id, root, state_path, inbox, state.inbox_root(),
                               options_.on_failure == CaptureFailurePolicy::kAllow, alone, &shim);
    if (ready.ok()) {
      meta.ring = shim.segment.name();  // recovery drains it if this supervisor dies
    } else if (alone) {
      return Fail("mode preload: " + ready.ToString());
    } else {
      early_warning = "mode auto without the shim: " + ready.ToString() + "; the tracer captures alone";
      use_shim = false;
    }
  }
  std::string meta_path = session_dir + "/meta.json";
  s = SaveSessionMeta(meta_path, meta);
  if (!s.ok()) return Fail(s.ToString());

  auto log = MakeSessionLogger(session_dir, meta.id);
  if (!early_warning.empty()) {
    log->warn("{}", early_warning);
    // Capture stays complete, only slower: said once, where the user sees it.
    std::fprintf(stderr, "guard: warning: %s\n", EscapeForTerminal(early_warning).c_str());
  }
  std::unique_ptr<BlobStore> store;
  s = BlobStore::Open(state.store_dir(), &store);
  if (!s.ok()) return Fail("blob store: " + s.ToString());
  store->SetPendingOwner(meta.id);  // recovery tells this session's pending blobs by it
  // What the session stores while it runs is stored raw: zstd took half of
  // the supervisor's time, which the command waited for on two cores. gc compresses
  // it afterwards (common/store_compact.h, docs/gc.md).
  store->SetCompress(false);
  std::unique_ptr<JournalWriter> journal;
  s = JournalWriter::Create(session_dir + "/journal", &journal);
  if (!s.ok()) return Fail("journal: " + s.ToString());

  FilterProgram filter;  // unused under --mode preload, which traces nothing
  s = BuildCaptureFilter(&filter, use_shim ? StubAllowance::kShim : StubAllowance::kNone);
  if (!s.ok()) return Fail("seccomp filter: " + s.ToString());

  Recorder recorder(meta, meta_path, std::move(journal), store.get(), log);
  CaptureConfig config;
  config.root = root;
  config.state_dir = state_path;
  if (use_shim) config.inbox_dir = state.inbox_root();
  config.config_dir = config_dir;
  config.on_failure = options_.on_failure;
  // The session's work, saved while it runs (post-images), and the
  // heartbeat recovery reads the supervisor's death time from.
  WorkSaver saver(root, &recorder, session_dir + "/alive", log, WorkSaver::Timing{});
  if (const char* lag = getenv("GUARD_POST_IMAGE_LAG_FILE"); lag != nullptr && *lag != '\0') saver.SetLagFile(lag);
  Capture capture(config, &recorder, log, &saver);
  // The shim's records reach capture through the ring (shim_feed.h); the
  // tracer's calls then go through the feed's sink, under the same lock.
  std::mutex capture_mu;
  ShimFeed feed(&capture, &capture_mu, meta.id, log);
  FedSink fed_sink(&capture, &feed, &capture_mu);
  if (use_shim) {
    Status ready = feed.Attach(shim.segment.base(), shim.segment.size());
    if (ready.ok()) ready = feed.SetInbox(inbox, store.get());
    if (!ready.ok() && alone) return Fail("mode preload: " + ready.ToString());
    if (!ready.ok()) {
      log->warn("mode auto without the shim: {}; the tracer captures alone", ready.ToString());
      use_shim = false;
      // The filter was built for the shim: without it, the stub must be no way past.
      s = BuildCaptureFilter(&filter, StubAllowance::kNone);
      if (!s.ok()) return Fail("seccomp filter: " + s.ToString());
    }
  }
  if (use_shim) {
    saver.SetLateCalls([&feed] { return feed.ClaimedPosition(); }, [&feed] { return feed.DeliveredPosition(); });
  }
  log->info("capture mode {}", alone ? "preload (the shim alone)" : use_shim ? "auto (shim and tracer)" : "trace");
  const std::chrono::nanoseconds sync_every(options_.sync_every_ns);
  if (options_.sync_every_ns != kSyncEveryDefaultNs) log->info("durable every {} ms", options_.sync_every_ns / 1000000);
  GroupCommit commit(recorder.journal(), store.get(), [&saver](uint64_t durable) { saver.OnDurable(durable); },
                     sync_every);

  LaunchSpec spec;
  spec.argv = options_.argv;
  spec.filter = &filter;
  // libuv would otherwise carry file writes over io_uring, past the filter;
  // the filter also makes io_uring_setup fail, so this only avoids a retry.
  spec.env_overrides = {"UV_USE_IO_URING=0", "GUARD_SESSION=" + meta.id, "GUARD_ROOT=" + root};
  if (use_shim) spec.env_overrides.insert(spec.env_overrides.end(), shim.env.begin(), shim.env.end());
  if (use_shim && !config_dir.empty()) spec.env_overrides.push_back("GUARD_CONFIG_DIR=" + config_dir);
  // With the shim, the state directory is what a call from its stub could
  // reach past the tracer (docs/security.md): it is hidden where it can be.
  // A state directory that is a mount of its own keeps the inbox in it
  // (state_dir.h): it cannot be hidden then.
  const bool can_hide = !state.inbox_inside();
  if (use_shim && options_.hide_state != "off" && !can_hide) {
    log->warn("the state directory is a mount of its own: it is not hidden from the command");
    if (options_.hide_state == "required") {
      return Fail("hide_state = \"required\", but the state directory " + state_path +
                  " is a mount of its own (docs/security.md)");
    }
  }
  if (use_shim && options_.hide_state != "off" && can_hide) {
    spec.hide_state_dir = state_path;
    spec.hide_state_required = options_.hide_state == "required";
    // Made now if missing, so that the command cannot create a config.toml
    // there either.
    if (!config_dir.empty() && MakeDirs(config_dir, 0700).ok()) spec.hide_also_dir = config_dir;
    // The shim may then take a name on the root's mount outside the root as
    // outside (capture_path.c): the state directory was no mount of its own
    // (can_hide), so no other name reaches it.
    spec.env_overrides.push_back("GUARD_STATE_SEALED=1");
  }
  log->info("root {}; command {}", root, options_.argv[0]);

  // A command that cannot be started (here, or when its exec fails) ends
  // the session like any other: committed, sealed, one line, 127 or 126.
  std::unique_ptr<TracedChild> child;
  Tracer tracer(use_shim ? static_cast<MutationSink*>(&fed_sink) : &capture, log);
  tracer.RecognizeTrees(use_shim ? std::vector<std::string>{root, state_path, state.inbox_root()}
                                 : std::vector<std::string>{root, state_path});
  UntracedRun untraced(log);  // --mode preload
  CheckpointTimer checkpoints(state, meta.id, std::chrono::nanoseconds(options_.checkpoint_every_ns), log);
  int status = 0;
  // Once the command runs, traced or not.
  auto started_as = [&](pid_t pid, auto* runner) {
    InstallSignalRelay(pid);
    // After the command started, which keeps its own signal dispositions.
    if (Status saver_started = saver.Start(); !saver_started.ok()) {
      log->error("work saver: {}", saver_started.ToString());
    }
    if (options_.checkpoint_every_ns > 0) checkpoints.Start();
    if (use_shim) feed.Start();
    link->CommandStarted(pid, static_cast<pid_t>(gettid()));
    if (link->active()) {
      runner->on_stop = [link](int sig) { link->CommandStopped(sig); };
      runner->on_continue = [link] { link->CommandContinued(); };
      runner->on_main_end = [&](int main_status, size_t remaining) {
        log->info("the command's first process ended; {} other process(es) still run", remaining);
        link->CommandEnded(EndOf(main_status).code, remaining);
      };
    }
  };
  // How the state directory's isolation went: said once, the session goes on.
  auto isolation_went = [&](const IsolationOutcome& o, pid_t pid) {
    if (o.isolated) {
      std::string ns;
      if (ReadLinkAt(AT_FDCWD, "/proc/" + std::to_string(pid) + "/ns/mnt", "ns", &ns).ok()) SetSessionNamespace(ns);
      log->info("the state directory is read-only for the command (its own user and mount namespace)");
    } else if (o.refused != 0) {
      log->warn("the state directory is not hidden from the command: user namespaces refused ({})",
                std::strerror(o.refused));
      if (!options_.quiet) {
        std::fprintf(stderr, "guard: warning: the state directory is not hidden from the command (no user "
                     "namespaces here: %s); see docs/security.md\n", strerrorname_np(o.refused));
      }
    }
  };
  if (alone) {
    s = untraced.Start(spec);
    if (s.ok()) {
      isolation_went(untraced.isolation(), untraced.pid());
      started_as(untraced.pid(), &untraced);
      s = untraced.Go();
      if (s.ok()) s = untraced.Run(&status);
    }
  } else {
    s = TracedChild::Start(spec, &child);
    if (s.ok()) {
      isolation_went(child->isolation(), child->pid());
      started_as(child->pid(), &tracer);
      s = tracer.Run(child.get(), &status);
    }
  }
  checkpoints.Stop();
  // Every process has ended: what the shim left in the ring is drained
  // before the work saver's last round and the seal.
  if (use_shim) {
    feed.Stop();
    feed.EmptyInbox();
    log->info("the shim reported {} calls ({} malformed records)", feed.calls(), feed.malformed());
  }
  saver.Stop();
  Status commit_status = commit.Stop();
  if (!commit_status.ok()) log->error("group commit: {}", commit_status.ToString());

  CommandEnd end = EndOf(status);
  SessionState end_state = end.state;
  int code = end.code, sig = end.sig;
  bool started = s.ok();
  if (!started) {
    Fail(s.ToString());
    log->error("the command could not be started or traced: {}", s.ToString());
    code = s.IsNotFound() ? 127 : 126;
    end_state = SessionState::kFinished;
    sig = 0;
  }
  log->info("command ended: exit {} signal {}; {} seccomp stops, {} exit stops", code, sig,
            tracer.seccomp_stops(), tracer.exit_stops());
  int64_t seal_start = MonoNowNs();
  Status seal = recorder.Seal(end_state, code, sig, 0, &saver);
  int64_t seal_ns = MonoNowNs() - seal_start;
  log->info("sealed in {:.3f} s; {} post-images saved while the session ran ({} waited for the ring's reports, "
            "{} of them dropped; {} ticks in a burst held {} polls back); end states: {} from post-images, {} read "
            "from the tree",
            static_cast<double>(seal_ns) / 1e9, saver.saved(), saver.late_deferred(), saver.late_dropped(),
            saver.burst_ticks(), saver.burst_held(), saver.seal_reused(), saver.seal_read());
  if (!seal.ok()) Fail("sealing the session: " + seal.ToString());
  if (use_shim && seal.ok()) RemoveUnrecordedShimPending(store.get(), meta.id, log.get());
  // Once the front has gone, the terminal is the user's again: say nothing.
  // A command that never started has had its one line.
  if (!options_.quiet && !link->released() && started) {
    std::string counts;
    if (capture.refused()) counts += ", " + std::to_string(capture.refused()) + " changes refused";
    if (capture.not_captured()) counts += ", " + std::to_string(capture.not_captured()) + " changes not captured";
    std::fprintf(stderr, "guard: session %s: %zu file%s changed%s\n", meta.id.c_str(), recorder.changed_count(),
                 recorder.changed_count() == 1 ? "" : "s", counts.c_str());
  }
  // The session's end as a commit on refs/guard/<id>, when the root is in
  // a git work tree; written by this untraced process, so it is no part of
  // any session and no undo removes it.
  WriteEndCheckpoint(meta.id, options_.quiet || link->released());
  // The store may now be over the retention policy: a detached gc sees to
  // it, without holding up the user's shell.
  if (options_.auto_gc) {
    long held_us = StartAutomaticGc(state_path);
    log->info("automatic gc check started ({} us)", held_us);
  }
  if (const char* stats = getenv("GUARD_STATS_FILE"); stats != nullptr && *stats != '\0') {
    if (FILE* f = std::fopen(stats, "we")) {
      std::fprintf(f, "seccomp_stops %llu\nexit_stops %llu\nops %llu\nfiles %zu\npost_images %llu\n",
                   static_cast<unsigned long long>(tracer.seccomp_stops()),
                   static_cast<unsigned long long>(tracer.exit_stops()),
                   static_cast<unsigned long long>(recorder.meta().ops), recorder.changed_count(),
                   static_cast<unsigned long long>(saver.saved()));
      std::fprintf(f, "shim_calls %llu\n", static_cast<unsigned long long>(feed.calls()));
      std::fprintf(f, "saver_burst_ticks %llu\nsaver_burst_held %llu\n",
                   static_cast<unsigned long long>(saver.burst_ticks()),
                   static_cast<unsigned long long>(saver.burst_held()));
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
  return code;
}

}  // namespace guard
