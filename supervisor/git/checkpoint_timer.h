// CheckpointTimer: writes a checkpoint of a running session every
// `interval` (guard -- CMD --checkpoint-every DURATION), on a thread of its
// own, never the tracer's. Its source is the session's journal and store as
// they stand (the post-images the work saver wrote), so it walks no tree
// and waits for no call. A failure is logged, the first one also on
// stderr, and never stops the session.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "common/state_dir.h"

namespace guard {

class CheckpointTimer {
 public:
  CheckpointTimer(StateDir state, std::string session_id, std::chrono::nanoseconds interval,
                  std::shared_ptr<spdlog::logger> log);
  ~CheckpointTimer();  // Stop()s
  CheckpointTimer(const CheckpointTimer&) = delete;
  CheckpointTimer& operator=(const CheckpointTimer&) = delete;

  void Start();
  // Waits for a checkpoint being written, then ends the thread.
  void Stop();

 private:
  void Run();

  const StateDir state_;
  const std::string id_;
  const std::chrono::nanoseconds interval_;
  std::shared_ptr<spdlog::logger> log_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace guard
