#include "supervisor/git/checkpoint_timer.h"

#include <cstdio>

#include "supervisor/git/checkpoint.h"

namespace guard {

CheckpointTimer::CheckpointTimer(StateDir state, std::string session_id, std::chrono::nanoseconds interval,
                                 std::shared_ptr<spdlog::logger> log)
    : state_(std::move(state)), id_(std::move(session_id)), interval_(interval), log_(std::move(log)) {}

CheckpointTimer::~CheckpointTimer() { Stop(); }

void CheckpointTimer::Start() { thread_ = std::thread([this] { Run(); }); }

void CheckpointTimer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointTimer::Run() {
  bool reported = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    CheckpointResult result;
    Status s = CheckpointSession(state_, id_, kSessionEnd, "", &result);
    if (!s.ok()) {
      log_->warn("checkpoint: {}", s.ToString());
      if (!reported) std::fprintf(stderr, "guard: checkpoint failed (the session goes on): %s\n", s.ToString().c_str());
      reported = true;
    } else if (result.written) {
      log_->info("checkpoint {} on {}: {} path(s), {} not saved yet", result.commit, CheckpointRef(id_),
                 result.paths, result.unknown);
    }
    lock.lock();
  }
}

}  // namespace guard
