// A session's life under capture, in the back process (front_process.h):
//   Prepare: the command, the root and the state directory; the session's
//            directory and meta.json; the shim (--mode auto and preload);
//            the store, the journal and capture with its producers.
//   Launch:  the command, traced (ptrace + seccomp) or under the shim alone,
//            with the session in its environment.
//   Run:     until every process of the session has ended; then what the
//            shim left in the ring is drained.
//   HandBack: the session's last records are written: one line for the
//            user, and the command's status goes back to the caller (the
//            front exits with it); the rest is the deferred seal
//            (supervisor/session/deferred_seal.h).
//   Seal:    the last post-images and group commit, the final states and
//            meta.json, the end checkpoint, the automatic gc: after the
//            caller has its status.
// LaunchSession (session_launcher_linux.cc) calls them in that order, once each.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/state_dir.h"
#include "common/status.h"
#include "supervisor/capture/capture.h"
#include "supervisor/session/deferred_seal.h"
#include "supervisor/session/group_commit.h"
#include "supervisor/session/mark_listener.h"
#include "supervisor/session/session_keeper.h"
#include "supervisor/session/session_cap.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/session/shim_feed.h"
#include "supervisor/session/work_saver.h"
#include "supervisor/commands/run_command.h"
#include "supervisor/git/checkpoint_timer.h"
#include "supervisor/trace/child_launch.h"
#include "supervisor/trace/seccomp_filter.h"
#include "supervisor/trace/shim_launch.h"
#include "supervisor/trace/tracer.h"
#include "supervisor/trace/untraced_run.h"
#include "supervisor/commands/git_kept_content.h"
#include "supervisor/watch/watch_session.h"

namespace guard {

class FrontLink;

class Session {
 public:
  // `options` and `link` outlive the session.
  Session(const RunCommand::Options& options, FrontLink* link) : options_(options), link_(link) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Each returns 0, or guard's exit status when the session cannot go on
  // (the command was not started): 127 for a command not found, 2 for a
  // root that cannot be, 125 otherwise.
  int Prepare();
  int Launch();
  // A command that could not be started (here, or when its exec failed)
  // ends the session like any other: Run returns at once, and Seal
  // commits, seals and says so in one line.
  void Run();
  // Marks the session as being sealed (deferred_seal.h) and hands the
  // command's status back to the caller. guard's process goes on, out of
  // the caller's job and terminal, to Seal.
  void HandBack();
  // Returns guard's exit status: the command's, 128+N for signal N, 127 or
  // 126 when it could not be started.
  int Seal();

  // The session's id once its directory exists ("" before).
  const std::string& id() const { return id_; }
  // --mode watch: the watcher, whose Barrier() makes a mark exact (null
  // in the other modes, and before Prepare).
  WatchSession* watch() { return watch_ ? &*watch_ : nullptr; }

 private:
  // Prepare's parts, in order.
  int FindPlaces();
  void ReportPrevious();
  int CreateRecord();
  int ReadyShim();
  int OpenCapture();
  // --mode watch: the watches, then the baseline (session_watch.cc).
  int OpenWatch();
  // Launch's: the command's environment and launch options.
  int MakeSpec(LaunchSpec* spec);
  void IsolationWent(const IsolationOutcome& outcome, pid_t pid);
  void ListenForMarks(MarkListener::Hooks hooks);
  void StartKeeper();
  void KeepSession(pid_t pid);
  template <typename Runner>
  void StartedAs(pid_t pid, Runner* runner);
  // guard's exit status: the command's, or 127/126 when it could not start.
  int ExitCode() const;
  // Seal's: GUARD_STATS_FILE, for the tests and tools/bench.
  void WriteStats(int64_t seal_ns);

  // Removes the ring segment's name when the session ends, whichever way;
  // if the supervisor dies instead, recovery drains the segment and
  // removes it.
  struct SegmentRemover {
    const ShimLaunch* shim;
    ~SegmentRemover() {
      if (shim->segment.valid()) (void)RingSegment::Remove(shim->segment.name());
    }
  };

  // Declared in the order they are made, so that they go in the reverse.
  const RunCommand::Options& options_;
  FrontLink* link_;
  std::string program_;  // argv[0], resolved
  bool alone_ = false;   // --mode preload: the shim alone, without which nothing would capture
  bool watching_ = false;  // --mode watch: no shim, no tracer; the tree is watched (supervisor/watch/)
  // --mode auto where ptrace is refused: the shim alone (alone_), with
  // watch mode (watching_) as its net for what the shim cannot see.
  bool net_ = false;
  bool use_shim_ = false;
  bool private_shm_ = false;  // the command's /dev/shm holds its ring alone (state_isolation.h)
  std::string shim_path_;
  std::string root_;
  StateDir state_;
  std::string state_path_;  // canonical
  // guard's configuration directory, protected as the state directory is:
  // its retention settings decide what gc removes (config.h).
  std::string config_dir_;
  SessionMeta meta_;
  std::string session_dir_;
  std::string id_;
  std::string early_warning_;  // for the session's log, once it is made
  ShimLaunch shim_;
  SegmentRemover remove_segment_{&shim_};
  std::string inbox_;
  std::string meta_path_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<BlobStore> store_;
  FilterProgram filter_;  // unused under --mode preload, which traces nothing
  std::optional<SessionCap> cap_;  // before the recorder and saver, which call it
  std::optional<Recorder> recorder_;
  std::optional<WorkSaver> saver_;
  std::optional<Capture> capture_;
  // The shim's records reach capture through the ring (shim_feed.h); the
  // tracer's calls then go through the feed's sink, under the same lock.
  std::mutex capture_mu_;
  std::optional<ShimFeed> feed_;
  std::optional<FedSink> fed_sink_;
  std::optional<GroupCommit> commit_;
  // Marks without the tracer (--mode preload): `guard mark` asks over a
  // socket (session/mark_channel.h).
  std::optional<MarkListener> marks_;
  // --mode watch in a git work tree: the baseline's clean tracked files by
  // object id (commands/git_kept_content.h); before watch_, which uses them.
  GitBaseline git_baseline_;
  std::optional<WatchSession> watch_;  // --mode watch
  BaselineSummary baseline_;
  int64_t baseline_ns_ = 0;
  std::unique_ptr<TracedChild> child_;
  std::optional<Tracer> tracer_;
  std::optional<UntracedRun> untraced_;  // --mode preload and watch
  // --mode preload and watch: stops the session's processes if guard dies.
  std::unique_ptr<SessionKeeper> keeper_;
  std::optional<CheckpointTimer> checkpoints_;
  Status launched_;  // how the command's start (and its run) went
  int status_ = 0;   // the command's first process's wait status
  SealInProgress sealing_;  // from HandBack to the end of Seal
  // For GUARD_STATS_FILE: when Run returned and when the caller had its
  // status; guard's CPU time then.
  int64_t ran_ns_ = 0, handed_back_ns_ = 0;
  int64_t handed_back_cpu_us_[2] = {0, 0};  // user, system
};

}  // namespace guard
