// Session::OpenWatch: --mode watch's producer, made before the command
// runs (supervisor/watch/, docs/capture.md "Watch mode"): the watches on
// every directory of the root first, then the baseline, so that a change
// made while the baseline is read is either in it or queued as an event.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/clock.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/session.h"
#include "supervisor/session/ring_barrier.h"
#include "supervisor/session/watch_baseline.h"
#include "supervisor/commands/git_kept_content.h"
#include "supervisor/commands/watch_setup.h"
#include "supervisor/watch/inotify_source.h"

namespace guard {
namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "guard: %s\n", msg.c_str());
  return kExitGuardError;
}

}  // namespace

int Session::OpenWatch() {
  WatchedTreeOptions options;
  bool by_git = true;
  if (Status s = WatchOptionsFromEnv(root_, {state_path_, config_dir_}, &options, &by_git); !s.ok()) {
    return Fail(s.message());
  }
  if (by_git) git_baseline_.Open(root_, state_path_, id_, *log_, &options);
  std::unique_ptr<InotifySource> source;
  if (Status s = InotifySource::Open(root_, options.excluded, &source); !s.ok()) {
    return Fail("mode watch: " + s.ToString());
  }
  if (source->blind()) {
    log_->warn("watch: some directories could not be watched ({} watched): every round rescans the tree",
               source->watches());
  }
  Capture* capture = &*capture_;
  std::mutex* mu = &capture_mu_;
  WatchSession::Sink sink = [capture, mu](const ObservedChange& change) {
    std::lock_guard<std::mutex> lock(*mu);
    return capture->Observed(change);
  };
  if (net_) {
    // The net under the shim: a path a record of the shim's names is the
    // shim's. The shim records a call before it runs, so once the ring is
    // drained up to now, a change made by a call it saw is named; what is
    // still not named was made where the shim cannot see (a raw system
    // call, a static program) and is recorded as observed.
    ShimFeed* feed = &*feed_;
    sink = [capture, mu, feed](const ObservedChange& change) {
      {
        std::lock_guard<std::mutex> lock(*mu);
        if (capture->Named(change.abs)) return Status::Ok();
      }
      (void)WaitForRingDelivered(feed, mu, std::chrono::seconds(10));
      std::lock_guard<std::mutex> lock(*mu);
      if (capture->Named(change.abs)) return Status::Ok();
      return capture->Observed(change);
    };
  }
  // GUARD_POST_IMAGE_LAG_FILE (tools/bench/watch_command.py): per change
  // recorded, the time from the file's last write (its mtime) to its
  // record, post-image saved, in the journal (not yet durable: the group
  // commit follows within capture.sync_every).
  if (const char* lag = getenv("GUARD_POST_IMAGE_LAG_FILE"); lag != nullptr && *lag != '\0') {
    std::shared_ptr<FILE> file(std::fopen(lag, "ae"), [](FILE* f) {
      if (f != nullptr) std::fclose(f);
    });
    if (file != nullptr) {
      sink = [inner = std::move(sink), file](const ObservedChange& change) {
        Status s = inner(change);
        if (s.ok() && change.after.type == FileType::kRegular && change.after.mtime_ns != 0) {
          std::fprintf(file.get(), "lag_us %lld\n", static_cast<long long>((WallNowNs() - change.after.mtime_ns) / 1000));
          std::fflush(file.get());  // whole lines: the work saver appends to the same file
        }
        return s;
      };
    }
  }
  WatchSession& watch = watch_.emplace(options, store_.get(), std::move(sink), log_, WatchSession::Timing{});
  const int64_t start = MonoNowNs();
  if (Status s = watch.Prepare(std::move(source), &baseline_); !s.ok()) return Fail("mode watch: baseline: " + s.ToString());
  // On disk too: if guard dies, recovery compares the tree with it
  // (session/watch_catch_up.h). Without it the session runs on, and a
  // recovery would miss what changed after the watcher's last round.
  if (Status s = WriteWatchBaseline(session_dir_ + "/watch_baseline", watch.tree(), options.excluded); !s.ok()) {
    log_->warn("watch: the baseline's file: {}; if guard dies, what changed after its last round is lost",
               s.ToString());
  }
  const int64_t took = MonoNowNs() - start;
  log_->info("watch: baseline of {} files, {} directories, {} others in {:.3f} s ({} read; {} files, {}, kept by "
             "name only; {} unreadable)",
             baseline_.files, baseline_.directories, baseline_.others, static_cast<double>(took) / 1e9,
             FormatSize(baseline_.bytes_saved), baseline_.name_only, FormatSize(baseline_.name_only_bytes),
             baseline_.unreadable);
  if (net_) {
    // What was there at the start: a path the shim's first record finds,
    // made since by a call nobody saw, gets its creation recorded first.
    auto start = std::make_shared<const std::vector<std::string>>(watch.tree().Paths());
    capture->SetStartTree([start](const std::string& rel) {
      return std::binary_search(start->begin(), start->end(), rel);
    });
  }
  LogBaselineWithoutCopy(*log_, baseline_);
  baseline_ns_ = took;
  return 0;
}

}  // namespace guard
