// SessionCap: the store's cap (retention.max_size, docs/gc.md) inside a
// running session. A gc removes whole sessions, never the running one; what
// binds a session while it runs is this: once the state directory is over
// the cap, the session's own intermediate versions are removed, oldest
// first, until it is under the cap again or none is left.
//
// Never removed (what the session keeps, whatever the cap):
//   * what a path held before the session (the pre-image of its first
//     operation), and its state at every mark (the pre-image of its first
//     operation after the mark): undo to the start, to a mark and --turns
//     stay exact;
//   * the latest version of each path (its last post-image, the latest
//     work, or its last pre-image, which the next version chains on), and
//     the end states, written at the seal, after the cap's last pass;
//   * every object another session or another record names, the base of
//     every append object, and anything the session did not store itself.
// Removed when the cap binds, once a later version of its path was stored:
// the pre-image of an operation on a path that an earlier operation of the
// same turn (since the last mark) had named, and a post-image. Each removal is
// recorded first (a `thinned` record, format 1.5), so that a restore to a
// point that needs it says it cannot be exact instead of calling the store
// damaged.
//
// Threads: the store calls Placed and Reusing from whichever thread puts;
// the recorder calls Saw under its append lock; Check runs on the work
// saver's thread, and on the session's once before it hands the command's
// status back (the terminal is the user's after) and once after the saver's
// last round. All state is under mu_; Check appends and removes without
// holding it across the append; check_mu_ lets one Check run at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "supervisor/capture/capture_log.h"

namespace guard {

class SessionCap final : public StoreObserver {
 public:
  // `state_dir`: measured once, at the first Check; `max_bytes`: the cap.
  // `log` receives the records (the session's Recorder).
  SessionCap(std::string state_dir, uint64_t max_bytes, BlobStore* store, CaptureLog* log,
             std::shared_ptr<spdlog::logger> logger);

  void Placed(const BlobKey& key, uint64_t bytes, int64_t mtime_ns) override;
  void Reusing(const BlobKey& key) override;
  void Resolved(const std::string& pending_name, const BlobKey& key) override;
  // Every record the session appends, once appended.
  void Saw(const Record& r);
  // Thins while the state directory is over the cap, saying so once (on
  // stderr and in guard.log) the first time it is. The state directory is
  // measured (a walk of it) only once the session has stored kMeasureAfter
  // of the cap (at most 64 MiB): a session that stores little never walks
  // the store, and has nothing worth thinning.
  void Check();
  static uint64_t MeasureAfter(uint64_t max_bytes) { return std::min<uint64_t>(max_bytes / 16, 64ULL << 20); }

  // What the state directory holds, as far as the cap counts: its size at
  // the first Check, plus what the session stored since, less what it
  // thinned.
  uint64_t counted_bytes() const;
  uint64_t thinned_count() const;

  // Test hook: the state directory's size at the first Check, instead of
  // measuring it.
  void SetStartBytesForTest(uint64_t bytes) { start_bytes_ = bytes, measured_ = true; }

 private:
  struct BlobKeyHash {
    size_t operator()(const BlobKey& k) const { return static_cast<size_t>(k.high ^ (k.low * 0x9e3779b97f4a7c15ULL)); }
  };
  struct Blob {
    uint64_t bytes = 0;
    int64_t mtime_ns = 0;
    uint32_t kept = 0;     // records that name it and are never thinned
    uint32_t held = 0;     // paths whose latest version it is
    bool ours = false;     // placed by this session
    bool pinned = false;   // named again, or a base: never thinned
    bool thinned = false;
    bool listed = false;   // in candidates_
  };
  void Keep(const BlobKey& key);
  // `key` is now the latest version of `path` the session stored: held
  // (the next version of the path chains on it, and it may be the latest
  // work); the one before is let go.
  void SetLatest(const std::string& path, const BlobKey& key);
  void Offer(const BlobKey& key);
  uint64_t CountedLocked() const;

  const std::string state_dir_;
  const uint64_t max_bytes_;
  BlobStore* store_;
  CaptureLog* log_;
  std::shared_ptr<spdlog::logger> logger_;

  mutable std::mutex mu_;
  std::unordered_map<BlobKey, Blob, BlobKeyHash> blobs_;       // guarded by mu_
  std::deque<BlobKey> candidates_;                              // guarded by mu_, oldest first
  std::unordered_map<std::string, BlobKey> latest_;             // guarded by mu_: SetLatest
  std::unordered_set<std::string> named_this_turn_;             // guarded by mu_
  // Pre-images named by a pending name (the shim's), not yet resolved: the
  // path, and whether each may be thinned once its key is known.
  struct PendingPreImage {
    std::string path;
    bool thinnable = false;
  };
  std::unordered_map<std::string, PendingPreImage> pending_pre_images_;  // guarded by mu_
  bool measured_ = false;    // guarded by mu_
  uint64_t start_bytes_ = 0; // guarded by mu_
  uint64_t placed_bytes_ = 0;     // guarded by mu_: since the measure
  uint64_t session_bytes_ = 0;    // guarded by mu_: since the session began
  uint64_t freed_bytes_ = 0;      // guarded by mu_
  uint64_t thinned_ = 0;          // guarded by mu_
  bool said_ = false;             // guarded by mu_
  std::mutex check_mu_;           // one Check at a time
};

}  // namespace guard
