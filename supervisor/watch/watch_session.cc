#include "supervisor/watch/watch_session.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace guard {

bool WatchTestPauseSet(std::string* path) {
  const char* spec = std::getenv("GUARD_TEST_PAUSE_WATCH");
  if (spec == nullptr || *spec == '\0') return false;
  *path = spec;
  return true;
}

WatchSession::WatchSession(WatchedTreeOptions options, BlobStore* store, Sink sink,
                           std::shared_ptr<spdlog::logger> log, Timing timing)
    : tree_(options, store), sink_(std::move(sink)), log_(std::move(log)), timing_(timing), hints_(options.root) {}

WatchSession::~WatchSession() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status WatchSession::Prepare(std::unique_ptr<WatchSource> source, BaselineSummary* summary) {
  source_ = std::move(source);
  return tree_.Baseline(summary);
}

void WatchSession::Start() {
  std::string pause;
  const bool paused = WatchTestPauseSet(&pause);
  if (paused) {
    if (FILE* f = std::fopen(pause.c_str(), "we")) std::fclose(f);
  }
  thread_ = std::thread([this, paused, pause] {
    for (int i = 0; paused && i < 6000 && access(pause.c_str(), F_OK) == 0; ++i) usleep(10 * 1000);
    Loop();
  });
}

void WatchSession::Loop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> round(round_mu_);
      if (Status s = Round(/*deferrable=*/true); !s.ok()) log_->warn("watch: {}", s.ToString());
    }
    std::unique_lock<std::mutex> lock(stop_mu_);
    if (stop_cv_.wait_for(lock, timing_.tick, [this] { return stopping_; })) return;
  }
}

Status WatchSession::Round(bool deferrable) {
  if (!source_) return Status::Ok();
  std::vector<WatchHint> got;
  if (source_error_.ok()) {
    source_error_ = source_->Drain(&got);
    if (!source_error_.ok()) log_->error("watch: the source failed ({}): every round rescans the tree",
                                         source_error_.ToString());
  }
  if (!source_error_.ok()) got.push_back({tree_.root(), WatchHint::Scope::kAll});
  hints_.AddAll(got);
  if (hints_.empty()) return Status::Ok();
  rounds_.fetch_add(1, std::memory_order_relaxed);
  if (hints_.all()) rescans_.fetch_add(1, std::memory_order_relaxed);
  Status first;
  // The thread's rounds may leave a file read a moment ago for a later
  // one; a Barrier's compare everything now.
  std::vector<WatchHint> later;
  Status caught = tree_.Catch(hints_.Take(), [&](const ObservedChange& change, bool before_not_captured) {
    ObservedChange c = change;
    c.before_not_captured = before_not_captured;
    Status s = sink_(c);
    changes_.fetch_add(1, std::memory_order_relaxed);
    if (!s.ok() && first.ok()) first = s;
    return s;
  }, deferrable ? &later : nullptr);
  hints_.AddAll(later);
  return first.ok() ? caught : first;
}

Status WatchSession::Barrier() {
  std::lock_guard<std::mutex> round(round_mu_);
  return Round(/*deferrable=*/false);
}

Status WatchSession::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Status last = Barrier();
  std::lock_guard<std::mutex> round(round_mu_);
  tree_.DropUnusedClones();
  return last;
}

}  // namespace guard
