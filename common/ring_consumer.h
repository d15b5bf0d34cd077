// RingConsumer: the one reader of the shared-memory ring (docs/ring.md,
// "Draining"). It delivers published records in the order they were claimed,
// reading past a claim that stays unpublished (its owner slow, stopped, or a
// forger's) so that it holds back nobody else's records, zeroes what it
// consumed and moves the head, wakes producers waiting for room, and frees
// the space of a record whose owner died before publishing it, or that no
// process of the session owns (never one whose owner is merely slow or
// stopped).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/ring_format.h"
#include "common/status.h"

namespace guard {

struct RingRecord {
  uint64_t position = 0;  // where it starts in the ring's positions
  uint32_t type = 0;
  pid_t pid = 0;  // the producer
  uint64_t start_ticks = 0;
  std::span<const uint8_t> payload;  // points into the ring: valid during the call only
};

struct RingConsumerCounters {
  uint64_t records = 0;          // delivered
  uint64_t padding = 0;          // padding records skipped
  uint64_t reclaimed = 0;        // claims of dead producers freed unpublished
  uint64_t reclaimed_bytes = 0;
  uint64_t freed_slots = 0;      // claim slots of dead producers freed
  uint64_t owner_probes = 0;     // /proc reads to tell whether an owner is alive
  // Unpublished claims Drain read past (their owners alive and of the
  // session): each is delivered when published, freed when its owner dies.
  uint64_t read_past = 0;
  // Claims and claim slots whose owner is alive but not of the session
  // (RingConsumer::SetSession), or a claim that no claim slot names: no
  // honest producer makes them. Freed, never delivered; evidence of forgery.
  uint64_t foreign_claims = 0;
  // 1 + the position of a record whose framing no producer makes (written
  // by something else than guard_ring_put): 0 while none was met.
  // From there nothing more is delivered (GiveUp).
  uint64_t corrupt_at = 0;
};

class RingConsumer {
 public:
  // Records, one at a time, in ring order. Returning false leaves the record
  // in the ring (it is delivered again by the next Drain, or by recovery).
  using Handler = std::function<bool(const RingRecord&)>;

  RingConsumer() = default;
  RingConsumer(const RingConsumer&) = delete;
  RingConsumer& operator=(const RingConsumer&) = delete;
  // Detaches (see Detach).
  ~RingConsumer();

  // Checks the ring mapped at base (size bytes; the mapping stays the
  // caller's, e.g. a RingSegment's, and must outlive this) and attaches as
  // its consumer: the header names this process, so that producers waiting
  // on a full ring can tell when it is gone.
  Status Attach(void* base, size_t size);

  // The session's processes are `root` and its descendants (the supervisor,
  // a child subreaper: common/ring_lineage.h): a claim whose owner is alive
  // and not one of them is forged, freed and never delivered. 0 (recovery,
  // the tests' default): owners are not checked.
  void SetSession(pid_t root) { session_root_ = root; }

  // Delivers published records from the head, up to max of them, and frees
  // dead producers' unpublished claims on the way. A live producer's
  // unpublished claim is read past the second time Drain finds it (at most
  // one per claim slot, GUARD_RING_SLOTS): the records after it are
  // delivered, and it is delivered once published. Stops at the tail, at an
  // unpublished claim seen for the first time, or when handler returns
  // false. Returns the number delivered.
  size_t Drain(const Handler& handler, size_t max = SIZE_MAX);

  // Sleeps until producers have published an eighth of the ring, or one of
  // them waits for room, or timeout_ms passes. Records are safe in the
  // segment meanwhile, so the timeout is what bounds how long they sit
  // there before a Drain (and how soon a dead producer's claim is noticed;
  // it is never a reason to free anything).
  void Wait(int timeout_ms);
  // Ends the Wait under way, or the next one, at once: for the thread that
  // stops the consumer's loop, which would otherwise wait out the timeout
  // (a session's end waited up to 10 ms for it). Safe from another thread
  // than the one in Wait, between Attach and Detach (which it must not
  // race); every later Wait returns at once too, until the next Attach.
  void Interrupt();

  // True when every claimed byte has been consumed (head == tail). Safe to
  // call from any thread; the rest of the class is for one thread.
  bool Empty() const;
  // The end of the last claim producers made, and the position up to which
  // records have been delivered (and freed): both only grow. A record
  // claimed before ClaimedPosition() returned x has been handed to the
  // handler once ConsumedPosition() >= x. Safe from any thread.
  uint64_t ClaimedPosition() const;
  uint64_t ConsumedPosition() const;
  // True when the last Drain stopped at an unpublished record it has not
  // read past (seen for the first time, or no owner known yet): the
  // published records behind it are not delivered yet.
  bool Blocked() const { return blocked_; }
  // Unpublished claims read past and not yet resolved.
  size_t HeldClaims() const { return held_.size(); }

  // Says the consumer is gone (producers waiting for room then fail with
  // -EPIPE instead of waiting) and wakes them. Attach again to resume.
  void Detach();

  const RingConsumerCounters& counters() const { return counters_; }

 private:
  enum class Owner { kAlive, kDead };
  // What an unpublished claim found stalled is.
  enum class Stall {
    kUnknown,  // no owner known yet: look again later
    kLive,     // its owner lives and is of the session: read past it
    kDead,     // its owner is dead: free it
    kForeign,  // no process of the session owns it: free it, never deliver it
    kCorrupt,  // its end is not one a claim could have
  };
  // A claim read past: [pos, end), owned by `owner` (an identity).
  struct HeldClaim {
    uint64_t pos = 0;
    uint64_t end = 0;
    uint64_t owner = 0;
  };
  // Whether the process (pid, start_ticks) is gone. A /proc that cannot be
  // read answers alive: freeing a live producer's record would be the worse
  // mistake.
  Owner Probe(pid_t pid, uint64_t start_ticks);
  Owner ProbeIdentity(uint64_t identity);
  // The unpublished record at pos (its length word is len: 0 or negative),
  // found there twice: its end and owner, and what it is.
  Stall Examine(uint64_t pos, int32_t len, uint64_t tail_pos, HeldClaim* claim);
  // The slot that made the claim at pos with a zero header: true with *end
  // and *owner.
  bool ClaimSlot(uint64_t pos, uint64_t* end, uint64_t* owner);
  // Whether a live owner (its pid) is of the session.
  bool OfSession(pid_t pid);
  // Hands a published record at pos (its length len) to the handler (or
  // skips it, padding): kRefused if the handler refused it, kCorrupt if its
  // framing is none a producer makes (then GiveUp has run).
  enum class Delivery { kDone, kRefused, kCorrupt };
  Delivery Deliver(uint64_t pos, int32_t len, uint64_t tail_pos, const Handler& handler, size_t* delivered);
  // The claims read past: delivers those published since, and frees those
  // whose owners died unless reclaimed is null (then no owner is probed);
  // false when Drain must stop.
  bool Revisit(const Handler& handler, size_t max, size_t* delivered, bool* reclaimed);
  // Everything before `end` at the scan front is consumed: freed at once
  // when no claim is held, else left for FreeUpToHeld.
  void Consumed(uint64_t end);
  // Frees from the head up to the first claim still held (or the scan
  // front), in pieces that do not cross the end of the data.
  void FreeUpToHeld();
  void Free(uint64_t pos, uint64_t end);
  // A record's framing is not one a producer makes: stop delivering, and
  // say the consumer is gone so that producers waiting for room give up.
  void GiveUp(uint64_t at);
  // Clears the header's consumer and wakes producers waiting for room.
  void SayGone();
  // Whether [pos, end) could be one claim: whole 8-byte units, not past the
  // last claim, not past the end of the data.
  bool InData(uint64_t pos, uint64_t end, uint64_t tail_pos) const;
  void PublishHead();
  // Drops the consumer's own mapping of the data behind the head, every
  // kGiveBackBytes of it (MADV_DONTNEED: the segment keeps the content), so
  // that the ring does not stay in guard's resident set.
  void GiveBack();
  static constexpr uint64_t kGiveBackBytes = 1u << 20;
  void WakeProducers();
  void CollectDeadSlots();

  guard_ring_header* header_ = nullptr;
  unsigned char* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t identity_ = 0;
  uint64_t head_ = 0;  // ours alone; published to header_->head
  uint64_t resident_from_ = 0;  // GiveBack: where our mapping may still hold pages
  // Where reading goes on: head_ when no claim is held, else past the last
  // one read past. [head_, scan_) holds records delivered (or freed as a
  // dead producer's) and the held claims, all of it freed once the held
  // claims before it are resolved.
  uint64_t scan_ = 0;
  // The claims read past, by position: at most GUARD_RING_SLOTS (an honest
  // claim, until published, is named by its owner's claim slot).
  std::vector<HeldClaim> held_;
  // The unpublished position Drain last stopped at: its owner is probed the
  // second time Drain stops there, not the first (it is usually being
  // written at that very moment); stuck_count_ counts the stops.
  uint64_t stuck_at_ = UINT64_MAX;
  int stuck_count_ = 0;
  pid_t session_root_ = 0;
  bool blocked_ = false;
  // Set by Interrupt (any thread), read by Wait.
  std::atomic<bool> interrupted_{false};
  RingConsumerCounters counters_;
};

}  // namespace guard
