// Session::OpenWatch: --mode watch's producer, made before the command
// runs (supervisor/watch/, docs/capture.md "Watch mode"): the watches on
// every directory of the root first, then the baseline, so that a change
// made while the baseline is read is either in it or queued as an event.
#include <cstdio>
#include <cstdlib>

#include "common/clock.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/session.h"
#include "supervisor/session/watch_baseline.h"
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
  options.root = root_;
  for (const std::string& own : {state_path_, config_dir_}) {
    if (!own.empty()) options.excluded.push_back(own);
  }
  // GUARD_WATCH_BASELINE_BYTES: the baseline's budget (watched_tree.h), for
  // tests and for trees whose size the user knows.
  if (const char* budget = getenv("GUARD_WATCH_BASELINE_BYTES"); budget != nullptr && *budget != '\0') {
    char* end = nullptr;
    unsigned long long v = std::strtoull(budget, &end, 10);
    if (end == budget || *end != '\0') return Fail(std::string("GUARD_WATCH_BASELINE_BYTES: not a number: ") + budget);
    options.baseline_budget = v;
  }
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
  baseline_ns_ = took;
  return 0;
}

}  // namespace guard
