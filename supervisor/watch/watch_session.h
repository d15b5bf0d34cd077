// WatchSession: watch mode's producer (docs/capture.md, "Watch mode"). A
// thread takes the hints of a WatchSource (watch_source.h) every tick,
// coalesces them (hint_set.h), compares the hinted names with what it saved
// last (watched_tree.h) and hands each difference to capture
// (Capture::Observed), the content of its new state already in the store.
// Nothing of it is in the path of the command's calls: the command is
// neither stopped nor slowed by anything but the kernel's queuing of events.
//
// Threads. One round at a time, under round_mu_: the thread's, each tick,
// or a Barrier's. The thread never reads the source outside a round, so a
// Barrier that holds round_mu_ and drains the source sees every event the
// kernel queued before it (no hint sits in another thread's hands).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/watch/hint_set.h"
#include "supervisor/watch/watch_source.h"
#include "supervisor/watch/watched_tree.h"

namespace guard {

class WatchSession {
 public:
  // Where each change goes (capture, under the session's capture lock).
  using Sink = std::function<Status(const ObservedChange& change)>;

  struct Timing {
    // How often the thread drains the source and compares. A change is
    // saved within one tick and one round of comparing, well within the
    // work saver's bound (docs/durability.md).
    std::chrono::milliseconds tick{20};
  };

  WatchSession(WatchedTreeOptions options, BlobStore* store, Sink sink, std::shared_ptr<spdlog::logger> log,
               Timing timing);
  ~WatchSession();
  WatchSession(const WatchSession&) = delete;
  WatchSession& operator=(const WatchSession&) = delete;

  // Before the command runs: `source`'s watches are already set (made by
  // the caller), then every path under the root is saved (the baseline).
  // Changes made from here on reach the source, so none falls between
  // the baseline and the watching.
  Status Prepare(std::unique_ptr<WatchSource> source, BaselineSummary* summary);
  // Starts the thread.
  void Start();
  // Saves every change made before the call and returns once each is
  // handed to the sink: the source drained, the hinted names compared, the
  // differences recorded. A mark (`guard mark`) is exact through it.
  Status Barrier();
  // The thread ends, then a last Barrier; the baseline's clones no change
  // named are removed from the store. Idempotent.
  Status Stop();

  uint64_t changes() const { return changes_.load(std::memory_order_relaxed); }
  uint64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }
  uint64_t rescans() const { return rescans_.load(std::memory_order_relaxed); }
  const WatchedTree& tree() const { return tree_; }

 private:
  void Loop();
  // One round: drain, coalesce, compare. Called with round_mu_ held.
  // `deferrable`: a file read a moment ago may wait for a later round
  // (WatchedTreeOptions::reread_after_ns); a Barrier's round is not.
  Status Round(bool deferrable);

  WatchedTree tree_;
  Sink sink_;
  std::shared_ptr<spdlog::logger> log_;
  Timing timing_;
  std::unique_ptr<WatchSource> source_;
  HintSet hints_;
  std::mutex round_mu_;  // one round at a time (above)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread thread_;
  // Counters, read by the session for its log and its stats file; written
  // under round_mu_, read anywhere (relaxed: figures only).
  std::atomic<uint64_t> changes_{0};
  std::atomic<uint64_t> rounds_{0};
  std::atomic<uint64_t> rescans_{0};
  Status source_error_;  // guarded by round_mu_: the source failed; every round rescans
};

// The test-only pause point of watch mode: GUARD_TEST_PAUSE_WATCH=PATH.
// WatchSession::Start creates PATH, and its thread does nothing until the
// test removes it (at most 60 s): a test can then make more changes than
// the kernel's queue holds (tests/e2e/watch_mode_test.cc). Unset (the only
// case outside tests): nothing.
bool WatchTestPauseSet(std::string* path);

}  // namespace guard
