// ShimFeed: the supervisor's end of the ring (docs/ring.md): it drains the
// records the preload shim put there (common/shim_record.h) and hands each
// captured call to Capture, as the tracer hands the calls it stops.
//
// The shim reports a call twice, both times from the calling thread: a CALL
// before the call runs (what it asks, the lstat of its paths, the pre-images
// it put into the store's pending directory) and an OUTCOME once it
// returned. By the time the feed reads a CALL the call may have run, so
// capture is given everything it would otherwise read of the tree
// (Mutation::pre) and reads nothing; the OUTCOME brings the state the call
// left (Capture::Ran). A CALL whose thread ends without its OUTCOME (killed
// inside the call) may have happened (Capture::Abandon).
//
// Order. Capture is one object for two producers: the feed's thread and the
// tracer's. Both call it under one mutex, and FedSink, the sink the tracer
// is given, drains the ring before every call it forwards: a record the
// shim published before a traced thread stopped is in the journal before
// what that stop records, so the journal keeps the order in which the calls
// could have seen each other.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "common/blob_store.h"
#include "common/ring_consumer.h"
#include "common/shim_record.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/capture/capture.h"
#include "supervisor/session/shim_mismatch.h"

namespace guard {

class ShimFeed {
 public:
  // `mu` guards `capture` against the tracer's thread; `owner` is the
  // session id, which every pending name the shim makes starts with.
  ShimFeed(Capture* capture, std::mutex* mu, std::string owner, std::shared_ptr<spdlog::logger> log);
  ~ShimFeed();
  ShimFeed(const ShimFeed&) = delete;
  ShimFeed& operator=(const ShimFeed&) = delete;

  // Becomes the consumer of the ring mapped at base (size bytes; the
  // mapping must outlive the feed).
  Status Attach(void* base, size_t size);
  // Where the shim leaves its pre-images (the session's inbox,
  // state_dir.h): each CALL's are taken from there into `store`'s pending/
  // as the CALL is applied (BlobStore::TakeFromInbox). Call before Start.
  Status SetInbox(const std::string& dir, BlobStore* store);
  // Takes what is left in the inbox (pre-images whose CALL never came: the
  // process died between the two) into pending/, where recovery's orphan
  // sweep finds them as before, and removes the inbox. After Stop.
  void EmptyInbox();

  // Evidence of forgery (docs/security.md, "Failing closed"): what no
  // honest producer makes: framing that cannot be (RingConsumerCounters::
  // corrupt_at), a claim owned by no process of the session (foreign_claims),
  // a shim record that fails its checks. At the first, the feed sets the
  // ring's fail_closed word (the shim puts no more CALLs: every call goes to
  // the real function) and calls `on_evidence` with what it saw, in plain
  // words (the session records it: Recorder::NoteIncomplete). The word is
  // set again at every drain after: a process that clears it gets the fast
  // path back for a moment, never a hidden call. Call before Start.
  using EvidenceHandler = std::function<void(const std::string& what)>;
  void SetEvidenceHandler(EvidenceHandler on_evidence) { on_evidence_ = std::move(on_evidence); }
  // Whether the feed saw evidence (the caller holds `mu`).
  bool failed_closed() const { return failed_closed_; }

  // Recovery: remember the pending names of the CALLs (pending_names).
  void KeepPendingNames() {
    keep_pending_names_ = true;
    hold_ = false;  // recovery drains whatever the test hook held back
  }
  // Starts the thread that drains the ring while the session runs.
  void Start();
  // Stops it, drains what is left, and abandons the calls whose OUTCOME
  // never came (their outcome is unknown: they may have happened).
  void Stop();

  // Hands every published record to capture. The caller holds `mu`.
  void DrainLocked();
  // `tid` ended (or exec'd): a call of its still waiting for its OUTCOME
  // never got one. The caller holds `mu` and has drained.
  void ThreadGone(pid_t tid);
  // Whether the call `tid` is in, as capture has it, is a shim call (one
  // the feed handed it after the tracer's last of that thread). The caller
  // holds `mu`.
  bool HasOpen(pid_t tid) const { return open_.count(tid) != 0; }
  // The last drain stopped at a record a live producer has claimed and not
  // yet published: records published after it, a traced thread's own
  // earlier shim calls among them maybe, are not delivered yet. The caller
  // holds `mu`.
  bool BlockedLocked() const { return attached_ && !hold_ && consumer_.Blocked(); }
  // The name lock of `abs` (docs/ring.md, "Name locks") for the traced
  // call of `tid`, which holds it from guard's look at the name until the
  // call has ended, as a shim call holds its own: kTaken (*index: give it
  // back), kMine (the thread holds it already), kHeld (a live thread of
  // another process of the session holds it: a shim call between its look
  // and its OUTCOME, which may not have run yet), kNone (no ring). A word
  // whose owner is gone or not of the session is taken over. Never waits.
  enum class NameLock { kTaken, kMine, kHeld, kNone };
  NameLock TakeNameLock(const std::string& abs, pid_t tid, uint32_t* index);
  // Releases a lock TakeNameLock took for `tid`, waking the shim calls
  // that wait for it.
  void GiveNameLock(uint32_t index, pid_t tid);

  // The pending names the CALLs handed to capture named (recovery: they
  // are no orphans). The caller holds `mu`.
  const std::vector<std::string>& pending_names() const { return pending_names_; }
  // The ring's positions, for WorkSaver::SetLateCalls. Safe from any thread.
  uint64_t ClaimedPosition() const { return consumer_.ClaimedPosition(); }
  uint64_t DeliveredPosition() const { return consumer_.ConsumedPosition(); }
  uint64_t calls() const { return calls_.load(std::memory_order_relaxed); }
  const std::shared_ptr<spdlog::logger>& log() const { return log_; }
  uint64_t malformed() const { return malformed_.load(std::memory_order_relaxed); }

 private:
  struct OpenCall {
    uint64_t call_id = 0;
    uint32_t action = 0;
    std::string after_target;  // the symlink text the call leaves at its path, if any
  };
  bool Apply(const RingRecord& record);
  // Whether a name lock naming thread `tid` is held: the thread lives and
  // is of the session.
  bool OwnerHolds(uint32_t tid) const;
  // Takes pending name `name` of a CALL from the inbox (if one is set);
  // false, said in the log, when it cannot be taken.
  bool TakePending(const std::string& name, const guard_shim_stat& victim);
  void ApplyCall(const RingRecord& record);
  void ApplyOutcome(const RingRecord& record);
  void Loop();
  // Evidence of forgery: fails closed, says and records it (once).
  void Evidence(const std::string& what);
  // A malformed shim record: counted, logged, and evidence.
  void Malformed(const RingRecord& record, const char* why);
  // A shim of another protocol refused the session (shim_mismatch.h): said
  // once, by the live feed only (recovery's is not the session's voice).
  void SayShimMismatch();

  Capture* capture_;
  std::mutex* mu_;
  std::string owner_;
  std::shared_ptr<spdlog::logger> log_;
  RingConsumer consumer_;
  guard_ring_header* header_ = nullptr;  // the ring attached, for its name locks
  bool attached_ = false;
  bool hold_ = false;  // GUARD_TEST_HOLD_RING: drain nothing (recovery does; tests only)
  std::atomic<bool> stop_{false};
  std::thread thread_;
  // The shim's calls handed to Before whose OUTCOME has not come, by thread.
  std::unordered_map<pid_t, OpenCall> open_;  // guarded by *mu_
  std::vector<std::string> pending_names_;  // kept only when asked (KeepPendingNames)
  bool keep_pending_names_ = false;
  bool mismatch_said_ = false;  // SayShimMismatch's one line
  bool corrupt_reported_ = false;  // the ring's framing broke (RingConsumerCounters::corrupt_at), said once
  uint64_t foreign_seen_ = 0;      // RingConsumerCounters::foreign_claims as last looked at
  bool failed_closed_ = false;     // Evidence was seen: the ring's fail_closed word is kept set
  EvidenceHandler on_evidence_;
  std::atomic<uint64_t> calls_{0};
  std::atomic<uint64_t> malformed_{0};
  std::string inbox_dir_;
  UniqueFd inbox_;
  BlobStore* store_ = nullptr;
};

// The sink the tracer is given when the shim runs too: Capture under the
// feed's mutex, the ring drained first (see the order above).
class FedSink final : public MutationSink {
 public:
  FedSink(Capture* capture, ShimFeed* feed, std::mutex* mu) : capture_(capture), feed_(feed), mu_(mu) {}
  Verdict Before(const Mutation& m) override;
  void After(pid_t tid, long result) override;
  void Returned(pid_t tid) override;
  void Abandon(pid_t tid) override;
  void ForgetProcess(pid_t tid) override;
  long Mark(pid_t tid, std::string_view label, bool step) override;

 private:
  Capture* capture_;
  ShimFeed* feed_;
  std::mutex* mu_;
  // The ring position whose unpublished record a traced call waited for as
  // long as it may: no later call waits for it again.
  uint64_t waited_out_at_ = UINT64_MAX;
  // The name locks each traced thread holds for its call in flight
  // (ShimFeed::TakeNameLock), given back when the call has ended.
  std::unordered_map<pid_t, std::vector<uint32_t>> locks_;
  // Takes the locks of m's names for m.tid into *taken: false (none kept)
  // when a shim call of another thread holds one, unless the call has
  // `waited_out` its hold (then it keeps those it could take).
  bool TakeLocks(const Mutation& m, bool waited_out, std::vector<uint32_t>* taken);
  void GiveLocks(pid_t tid, std::vector<uint32_t>* taken);
  void GiveLocks(pid_t tid);
};

}  // namespace guard
