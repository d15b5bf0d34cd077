// WorkSaver: saves the session's work while it runs. For every path under
// the root that a call of the session changed, it saves, once the path has
// stopped changing, what the path holds (its content streamed into the blob
// store, or its type, mode and symlink target) and appends a post-image to
// the journal: a kFinal record flagged kPostImage (docs/format.md, Part IV,
// "The session's work"). A guard killed mid-session therefore leaves the
// session's work in the store and the journal, not only in the tree, and
// recovery can put it back after the tree was reverted (recovery_end_state.h).
//
// Threads. Capture (the tracer's thread) reports calls: CallBegins before
// their records are appended, CallEnds when their result is known. The
// saver's own thread polls the paths those calls changed (one lstat each per
// tick), and a second one touches the session's heartbeat file. The tracer
// never waits for a copy: it takes mu_ only to note a call, and the saver
// holds mu_ only to check that no call touched a path while it read it and
// to append that path's record (one small write(2)), never while it reads.
//
// Invariant: a post-image of path P with sequence number S says what P held
// at a moment after every call with a lower seq that names P (or moves a
// directory above P) had returned, and before every call with a higher seq
// did anything. The saver reads P only while no call on P or a directory
// above it is in flight, and appends the record only if no call on P, and no
// directory move, began or ended while it read (CallBegins comes before the
// call's own records are appended, under the same mu_ the saver appends
// under).
//
// When a path is saved (the rules, and the bound they give, are in
// docs/durability.md): once its stat signature has not changed for one tick
// and no process has it open for writing (a read lease is granted), or has
// not changed for `quiet`, or keeps changing for `max_age` since it was
// last saved. A path saved with no writer is not polled again until a call
// changes it: nothing else of the session can change it.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/capture/call_observer.h"
#include "supervisor/capture/recorder.h"

namespace guard {

class WorkSaver final : public EndStateReader, public CallObserver {
 public:
  struct Timing {
    std::chrono::milliseconds tick{200};       // dirty paths are lstat'ed this often
    std::chrono::milliseconds heartbeat{100};  // the alive file's mtime is set this often
    std::chrono::milliseconds quiet{1000};     // unchanged this long: saved, writer or not
    std::chrono::milliseconds max_age{3000};   // changing this long since the last save: saved anyway
    // A burst: calls ending at burst_calls a tick or faster. While
    // one lasts, a path dirty for less than burst_wait is left alone (no
    // lstat, no read): the saver's reads and writes would compete with the
    // command's for the disk and the CPU, and the seal or the first tick
    // after the burst saves it (docs/durability.md, "When a path is saved").
    uint64_t burst_calls{64};
    std::chrono::milliseconds burst_wait{1500};
  };

  // What one call (may) change, root-relative. `changed`: paths that may
  // hold something new afterwards; `removed`: paths the call removes
  // (delete, rmdir, a rename's source); `left`: directories whose entries
  // the call moves away (a rename's source, both sides of an exchange);
  // `arrived`: directories whose entries may all be new at their name (a
  // rename's destination, both sides of an exchange, a directory entering
  // the root).
  using Call = ChangedPaths;

  // `alive_path`: the heartbeat file (sessions/<id>/alive), whose mtime the
  // saver sets to now every `heartbeat` while the session runs. Recovery
  // reads it as the time the supervisor was last alive.
  WorkSaver(std::string root, Recorder* recorder, std::string alive_path, std::shared_ptr<spdlog::logger> log,
            Timing timing);
  ~WorkSaver() override;  // Stop()s
  WorkSaver(const WorkSaver&) = delete;
  WorkSaver& operator=(const WorkSaver&) = delete;

  // Called on the saver's thread after every tick, and once more when it
  // stops (the store's cap: session_cap.h). Set before Start.
  void SetTickHook(std::function<void()> hook) { tick_hook_ = std::move(hook); }
  // Creates the heartbeat file and starts the threads.
  Status Start();
  // Stops the threads (a post-image being read is dropped; the reads that
  // wait for the ring's reports are appended, or dropped if a report named
  // their path: the feed has delivered them all by then) and takes in the
  // calls reported since the last tick, so that Read and
  // AddPaths serve the seal from exactly what the journal holds.
  void Stop();

  // A producer that reports calls only after they ran (the shim, through
  // the ring: shim_feed.h): `claimed` gives a position that grows with each
  // call it reports, `delivered` the position up to which its reports have
  // reached CallBegins. A post-image read while such a call may have run
  // unreported is appended only once every report claimed before the read
  // began has been delivered: so the invariant above holds for them too.
  // Such a read waits for them (deferred_), and is dropped if one of them
  // named its path; during a burst the feed is always a little behind, and
  // a read given up at once would be made again at every tick, never kept.
  // Set before Start.
  void SetLateCalls(std::function<uint64_t()> claimed, std::function<uint64_t()> delivered) {
    late_claimed_ = std::move(claimed);
    late_delivered_ = std::move(delivered);
  }

  // From the tracer's thread.
  void CallBegins(const Call& call) override;
  // `happened`: the call succeeded, or its outcome is unknown (the thread
  // died inside it).
  void CallEnds(const Call& call, bool happened) override;

  // Test mode (GUARD_POST_IMAGE_LAG_FILE): one line per post-image, once it
  // is durable: the time from the file's mtime to the group commit that made
  // its record durable ("lag_us N path P"); and "idle wall_ns T" when a tick
  // finds every path saved and every post-image durable. OnDurable is called
  // by the group commit with the journal's durable size.
  void SetLagFile(const std::string& path);
  void OnDurable(uint64_t durable_bytes);

  uint64_t saved() const { return saved_count_.load(std::memory_order_relaxed); }
  // Reads whose record had to wait for the ring's reports (SetLateCalls),
  // and of them those dropped because a call on the path was reported.
  uint64_t late_deferred() const { return late_deferred_.load(std::memory_order_relaxed); }
  uint64_t late_dropped() const { return late_dropped_.load(std::memory_order_relaxed); }
  // Ticks that found a burst (Timing::burst_calls), and the polls of dirty
  // paths they left for later.
  uint64_t burst_ticks() const { return burst_ticks_.load(std::memory_order_relaxed); }
  uint64_t burst_held() const { return burst_held_.load(std::memory_order_relaxed); }
  // Tests: one tick now, on the caller's thread, with Timing::tick long
  // enough that the saver's own thread never ticks meanwhile.
  void TickForTest() { Tick(); }
  // Of the seal's Read calls: end states taken from a post-image the path
  // still held, and end states read from the tree.
  uint64_t seal_reused() const { return seal_reused_.load(std::memory_order_relaxed); }
  uint64_t seal_read() const { return seal_read_.load(std::memory_order_relaxed); }

  // EndStateReader, for the seal (after Stop): the post-image of a path that
  // still holds it, else the tree.
  void AddPaths(std::set<std::string>* paths) const override;
  Status Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
              uint32_t* flags) override;

 private:
  // What the saver knows of one path. Owned by the saver thread (and read by
  // the seal after Stop).
  struct Entry {
    bool dirty = false;           // may differ from `saved`: polled every tick
    bool seen_valid = false;
    FileState seen;               // metadata and signature at the last poll
    int64_t seen_since_ns = 0;    // when `seen` was first observed (monotonic)
    int64_t dirty_since_ns = 0;   // changing since (monotonic): for max_age
    int64_t retry_at_ns = 0;      // after a failed save: not before then
    enum class Saved : uint8_t { kNothing, kPostImage, kRemovedByCall } saved_kind = Saved::kNothing;
    FileState saved;              // kPostImage: the state recorded
    bool ever_saved = false;      // a post-image of it is in the journal
    bool awaiting = false;        // read, its record waits for the ring's reports (deferred_)
  };
  enum class EventKind : uint8_t { kChanged, kRemoved, kLeft, kArrived };
  struct Event {
    EventKind kind;
    std::string path;
  };
  // A path read whose record waits for the ring's reports to catch up with
  // the position claimed before the read (SetLateCalls): appended once they
  // have, if no call on the path or directory move was reported meanwhile.
  struct Deferred {
    std::string rel;
    FileState state;
    bool no_writer = false;
    bool exists = false;
    uint64_t gen = 0, move_gen = 0, late = 0;
  };
  struct LagEntry {
    uint64_t end_offset;
    int64_t mtime_ns;
    std::string path;
  };

  void RunTicks();
  void RunHeartbeat();
  void Tick();
  void Apply(const Event& e, int64_t now_ns);
  void Poll(const std::string& rel, Entry* e, int64_t now_ns);
  // Reads what `rel` holds and appends its post-image. `forced`: it keeps
  // changing; save what can be read even if it changes meanwhile.
  void Save(const std::string& rel, Entry* e, const struct stat& st, bool forced, int64_t now_ns);
  // The entry of `rel`, made if it has none (brought back from retired_ if
  // it was retired there).
  Entry& EntryOf(const std::string& rel);
  // Under mu_: whether a call on `rel` or a directory above it is in flight.
  bool InFlightLocked(const std::string& rel) const;
  std::string Absolute(const std::string& rel) const;
  // Notes an appended post-image in the path's entry.
  void NoteSaved(const std::string& rel, Entry* e, const FileState& state, bool no_writer, bool exists,
                 uint64_t end_offset, int64_t now_ns);
  // Appends the deferred saves whose late reports have been delivered,
  // after waiting up to `wait` for the ring to catch up with the last.
  // Returns how many it dropped that are left to read again.
  size_t FlushDeferred(std::chrono::milliseconds wait, bool at_stop, int64_t now_ns);

  const std::string root_;
  Recorder* const recorder_;
  const std::string alive_path_;
  std::shared_ptr<spdlog::logger> log_;
  const Timing timing_;
  UniqueFd alive_fd_;

  // Set by Start, before the saver's threads exist, on the tracer's thread
  // (relaxed: read only by that thread).
  std::atomic<bool> active_{false};
  // Shared with the tracer's thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                                // guarded by mu_
  std::multiset<std::string> in_flight_;                 // guarded by mu_: paths of calls in flight
  // Guarded by mu_: bumped at each call's begin and end, one slot per hash
  // of each path it names. A fixed array, not a counter per path ever
  // named: two paths that share a slot only make a save give up and try
  // again at the next tick.
  static constexpr size_t kGenSlots = 16384;
  std::vector<uint64_t> gen_ = std::vector<uint64_t>(kGenSlots);
  uint64_t& GenLocked(const std::string& rel) { return gen_[std::hash<std::string>{}(rel) % kGenSlots]; }
  uint64_t move_gen_ = 0;                                // guarded by mu_: bumped by directory moves
  std::vector<Event> events_;                            // guarded by mu_: for the next tick

  // The saver thread's own.
  std::map<std::string, Entry> entries_;
  // Paths a call removed, seen gone, never saved: all their entries would
  // hold is that (saved_kind kRemovedByCall, not dirty, last seen absent),
  // so only their names are kept, a fraction of an Entry's size (an `rm -rf`
  // of 100,000 files retires 100,000). EntryOf brings one back as it was.
  std::set<std::string> retired_;
  // Regular files saved, by inode: a path that shows the same inode, size
  // and mtime (renamed, chmod'ed, its directory moved) has the same content.
  std::map<std::pair<uint64_t, uint64_t>, FileState> by_inode_;
  std::atomic<uint64_t> saved_count_{0};  // written by the saver thread alone
  std::atomic<uint64_t> seal_reused_{0}, seal_read_{0};
  size_t unsaveable_logged_ = 0;

  std::mutex lag_mu_;
  FILE* lag_file_ = nullptr;        // guarded by lag_mu_
  std::deque<LagEntry> lag_queue_;  // guarded by lag_mu_
  bool reported_idle_ = false;      // guarded by lag_mu_

  std::function<void()> tick_hook_;  // SetTickHook
  std::function<uint64_t()> late_claimed_, late_delivered_;  // SetLateCalls
  // Written by the saver thread alone (relaxed: counts, read for reports).
  std::atomic<uint64_t> late_deferred_{0};  // saves whose record waited for them
  std::atomic<uint64_t> late_dropped_{0};   // of them, dropped: a call on the path was reported
  // Calls ended (CallEnds), and their count and the time at the last tick:
  // a burst is told by the rate between (Timing::burst_calls). Relaxed: a
  // count, read by the saver thread alone.
  std::atomic<uint64_t> calls_ended_{0};
  uint64_t calls_at_tick_ = 0;  // the saver thread's, as is:
  int64_t last_tick_ns_ = 0;
  std::atomic<uint64_t> burst_ticks_{0}, burst_held_{0};
  std::vector<Deferred> deferred_;  // the saver thread's (Stop's, after the join)

  std::thread ticker_, heart_;
};

}  // namespace guard
