#include "common/ring_consumer.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

#include "common/ring_lineage.h"
#include "common/ring_os.h"
#include "common/ring_producer.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

void FutexWakeAll(uint32_t* word) {
  ring_os_futex_wake_all(word);
}

// A consistent read of a claim slot (its seqlock).
struct SlotView {
  uint64_t identity = 0;
  uint64_t start = 0;
  uint64_t claim = 0;
};

// Reads a slot; false when no consistent read came in a bounded number of
// tries (then only v->identity holds): its owner is inside its seqlock,
// running, stopped there, or killed there, which leaves seq odd for good.
// The writer's section is three stores, so a running one lets a read
// through at once; waiting on a stopped or dead one would wedge the
// consumer (a producer SIGKILLed there did, in ring_processes_test).
bool ReadSlot(guard_ring_slot* s, SlotView* out) {
  constexpr int kTries = 1000;
  for (int i = 0; i < kTries; ++i) {
    // Acquire: the start and claim we read are at least as new as this seq.
    uint32_t before = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
    SlotView v;
    v.identity = __atomic_load_n(&s->identity, __ATOMIC_ACQUIRE);
    v.start = __atomic_load_n(&s->start, __ATOMIC_RELAXED);
    v.claim = __atomic_load_n(&s->claim, __ATOMIC_RELAXED);
    // Acquire fence: the loads above happen before the re-read of seq.
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint32_t after = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
    if (before == after && (before & 1) == 0) {
      *out = v;
      return true;
    }
  }
  *out = SlotView();
  out->identity = __atomic_load_n(&s->identity, __ATOMIC_ACQUIRE);
  return false;
}

}  // namespace

RingConsumer::~RingConsumer() { Detach(); }

Status RingConsumer::Attach(void* base, size_t size) {
  guard_ring_producer check;
  int rc = guard_ring_producer_init(&check, base, size);
  if (rc == -EPROTO) return Status::Unsupported("ring: segment of another format version");
  if (rc != 0) return Status::Corruption("ring: not a guard ring segment, or of the wrong size");
  uint64_t start = guard_ring_start_ticks(0);
  if (start == 0) return Status::IOError("ring: cannot read this process's start time from /proc");
  header_ = check.header;
  data_ = check.data;
  capacity_ = check.capacity;
  identity_ = GUARD_RING_IDENTITY(::getpid(), start);
  // Only the consumer writes head: a relaxed read of the last one's value
  // (recovery attaches to a segment a dead consumer left behind).
  head_ = __atomic_load_n(&header_->head, __ATOMIC_RELAXED);
  scan_ = head_;
  held_.clear();
  held_.reserve(GUARD_RING_SLOTS);
  stuck_at_ = UINT64_MAX;
  stuck_count_ = 0;
  interrupted_.store(false, std::memory_order_relaxed);
  // A consumer that died while freeing left freeing_end beyond the head:
  // what lies between was consumed (or was a dead producer's) and may be
  // half zeroed. Finish freeing it.
  uint64_t freeing = __atomic_load_n(&header_->freeing_end, __ATOMIC_ACQUIRE);
  uint64_t tail_pos = GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE));
  // (A range the session's processes forged is left alone: a real one never
  // runs past the end of the data, as no record does.)
  if (InData(head_, freeing, tail_pos)) {
    Free(head_, freeing);
    scan_ = head_;
  }
  // Relaxed: producers only read it to decide to give up waiting.
  __atomic_store_n(&header_->consumer, identity_, __ATOMIC_RELAXED);
  return Status::Ok();
}

void RingConsumer::Detach() {
  if (header_ == nullptr) return;
  SayGone();
  header_ = nullptr;
}

void RingConsumer::SayGone() {
  uint64_t expected = identity_;
  __atomic_compare_exchange_n(&header_->consumer, &expected, 0, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
  // Wake every waiter so that it sees the consumer gone now, not at its
  // next check.
  __atomic_fetch_add(&header_->space_seq, 1, __ATOMIC_RELEASE);
  FutexWakeAll(&header_->space_seq);
}

bool RingConsumer::Empty() const {
  if (header_ == nullptr) return true;
  // The published head, not head_: callable from another thread than the
  // one that drains (acquire, like a producer's look at it).
  return GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE)) ==
         __atomic_load_n(&header_->head, __ATOMIC_ACQUIRE);
}

uint64_t RingConsumer::ClaimedPosition() const {
  if (header_ == nullptr) return 0;
  return GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE));
}

uint64_t RingConsumer::ConsumedPosition() const {
  if (header_ == nullptr) return UINT64_MAX;  // nothing will ever be delivered late
  return __atomic_load_n(&header_->head, __ATOMIC_ACQUIRE);
}

RingConsumer::Owner RingConsumer::Probe(pid_t pid, uint64_t start_ticks) {
  ++counters_.owner_probes;
  if (pid <= 0) return Owner::kAlive;
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT || errno == ESRCH ? Owner::kDead : Owner::kAlive;
  char buf[1024];
  size_t n = 0;
  while (n < sizeof buf - 1) {
    ssize_t got = ::read(fd.get(), buf + n, sizeof buf - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Owner::kAlive;
    if (got == 0) break;
    n += static_cast<size_t>(got);
  }
  // A process that exited between the open and the read reads as empty.
  if (n == 0) return Owner::kDead;
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr) return Owner::kAlive;
  const char* p = close + 1;
  while (*p == ' ') ++p;
  // A zombie writes nothing more: dead for our purposes. A stopped ('T'),
  // traced ('t') or sleeping process is alive.
  if (*p == 'Z' || *p == 'X' || *p == 'x') return Owner::kDead;
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return Owner::kAlive;
    ++p;
  }
  char* end = nullptr;
  unsigned long long ticks = std::strtoull(p, &end, 10);
  if (end == p) return Owner::kAlive;
  // Another process under the same pid: the owner is dead.
  return ticks == start_ticks ? Owner::kAlive : Owner::kDead;
}

RingConsumer::Owner RingConsumer::ProbeIdentity(uint64_t identity) {
  return Probe(static_cast<pid_t>(GUARD_RING_IDENTITY_PID(identity)), GUARD_RING_IDENTITY_START(identity));
}

bool RingConsumer::ClaimSlot(uint64_t pos, uint64_t* end, uint64_t* owner) {
  // Claimed, but the owner has not written even its length: its claim slot
  // says who it is. The claim the tail names is the last one made; any
  // earlier one was marked WON in its slot by the claim after it, before
  // that claim moved the tail (acquire: we see the mark).
  uint64_t tail = __atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE);
  uint64_t tail_pos = GUARD_RING_TAIL_POSITION(tail);
  uint32_t named = GUARD_RING_TAIL_SLOT(tail);
  // A torn slot (ReadSlot false) names no claim that landed: its owner is
  // still saying what it will claim.
  SlotView v;
  if (named < GUARD_RING_SLOTS && ReadSlot(&header_->slots[named], &v)) {
    if (v.identity != 0 && v.start == pos && (v.claim & ~GUARD_RING_CLAIM_WON) == tail_pos) {
      *end = tail_pos;
      *owner = v.identity;
      return true;
    }
  }
  for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) {
    if (!ReadSlot(&header_->slots[i], &v)) continue;
    if (v.identity != 0 && v.start == pos && (v.claim & GUARD_RING_CLAIM_WON) != 0) {
      *end = v.claim & ~GUARD_RING_CLAIM_WON;
      *owner = v.identity;
      return true;
    }
  }
  return false;
}

bool RingConsumer::OfSession(pid_t pid) {
  if (session_root_ <= 0) return true;
  // Unknown (the owner ended during the walk, /proc unreadable) counts as
  // of the session: its claim is then held, and freed once it is dead.
  return guard_ring_descends_from(pid, session_root_) != 0;
}

RingConsumer::Stall RingConsumer::Examine(uint64_t pos, int32_t len, uint64_t tail_pos, HeldClaim* claim) {
  claim->pos = pos;
  if (len < 0) {
    // The length went negative after the owner fields (release; our
    // acquire load of it in Drain orders these after).
    auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (pos & (capacity_ - 1)));
    pid_t pid = static_cast<pid_t>(__atomic_load_n(&rec->pid, __ATOMIC_RELAXED));
    uint64_t start = __atomic_load_n(&rec->start_ticks, __ATOMIC_RELAXED);
    claim->end = pos + static_cast<uint64_t>(-static_cast<int64_t>(len));
    claim->owner = GUARD_RING_IDENTITY(pid, start);
  } else if (!ClaimSlot(pos, &claim->end, &claim->owner)) {
    // No slot says it made this claim: its owner has not finished saying
    // so yet (we read the tail before its CAS landed). Wait. A position
    // that stays so is no claim a producer made (its length was zeroed by
    // a process of the session): nothing says where the next record
    // starts.
    return stuck_count_ >= 4 ? Stall::kCorrupt : Stall::kUnknown;
  }
  // The end comes from the header or a slot, which the session's processes
  // can write: only one a claim could have had is ever used.
  if (!InData(pos, claim->end, tail_pos)) return Stall::kCorrupt;
  if (ProbeIdentity(claim->owner) == Owner::kDead) return Stall::kDead;
  if (len < 0) {
    // An honest producer's claim is named by its claim slot until it is
    // published: its identity, this start, this end. One that no slot
    // names (and that is still unpublished now that we looked at every
    // slot) was written by something else than guard_ring_put.
    bool named = false;
    for (uint32_t i = 0; i < GUARD_RING_SLOTS && !named; ++i) {
      SlotView v;
      named = ReadSlot(&header_->slots[i], &v) && v.identity == claim->owner && v.start == pos &&
              (v.claim & ~GUARD_RING_CLAIM_WON) == claim->end;
    }
    auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (pos & (capacity_ - 1)));
    if (!named) return __atomic_load_n(&rec->length, __ATOMIC_ACQUIRE) == len ? Stall::kForeign : Stall::kUnknown;
  }
  if (!OfSession(static_cast<pid_t>(GUARD_RING_IDENTITY_PID(claim->owner)))) return Stall::kForeign;
  return Stall::kLive;
}

void RingConsumer::Free(uint64_t pos, uint64_t end) {
  // Say what we free before we start, so that a successor can finish it if
  // we die halfway (release: ordered before the zeroes; process death is
  // what it guards against, not another thread).
  __atomic_store_n(&header_->freeing_end, end, __ATOMIC_RELEASE);
  // Plain zeroing: nobody writes here until our head store below lets them,
  // and every header position of the next lap must read as zero.
  std::memset(data_ + (pos & (capacity_ - 1)), 0, end - pos);
  head_ = end;
  PublishHead();
  GiveBack();
}

void RingConsumer::GiveBack() {
  const uint64_t page = 4096;
  uint64_t from = resident_from_ & ~(page - 1);
  const uint64_t to = head_ & ~(page - 1);
  if (to <= from || to - from < kGiveBackBytes) return;
  resident_from_ = to;
  if (to - from > capacity_) from = to - capacity_;
  const uint64_t at = from & (capacity_ - 1);
  const uint64_t len = to - from;
  const uint64_t first = std::min(len, capacity_ - at);
  ring_os_give_back(data_ + at, first);
  if (first < len) ring_os_give_back(data_, len - first);
}

void RingConsumer::Consumed(uint64_t end) {
  scan_ = end;
  // (In pieces: the head may still be behind a held claim resolved during
  // this scan, and the run from it may cross the end of the data.)
  if (held_.empty()) FreeUpToHeld();
}

void RingConsumer::FreeUpToHeld() {
  const uint64_t until = held_.empty() ? scan_ : held_.front().pos;
  while (head_ < until) {
    // A run of records may cross the end of the data; each record does not.
    const uint64_t lap_end = (head_ | (capacity_ - 1)) + 1;
    Free(head_, until < lap_end ? until : lap_end);
  }
}

void RingConsumer::PublishHead() {
  // seq_cst: the zeroes before it (release), and against the producers'
  // space_waiters increment and head load (see the header's field).
  __atomic_store_n(&header_->head, head_, __ATOMIC_SEQ_CST);
}

void RingConsumer::WakeProducers() {
  if (__atomic_load_n(&header_->space_waiters, __ATOMIC_SEQ_CST) != 0) {
    __atomic_fetch_add(&header_->space_seq, 1, __ATOMIC_RELEASE);
    FutexWakeAll(&header_->space_seq);
  }
}

void RingConsumer::CollectDeadSlots() {
  for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) {
    SlotView v;
    const bool whole = ReadSlot(&header_->slots[i], &v);
    if (v.identity == 0) continue;
    // A slot may still be what says who owns a claim not read yet (at or
    // after the scan front, before the tail) or one held: keep it until
    // the scan has passed its start. A torn one says nothing.
    auto names_claim = [&](uint64_t tail_pos) {
      if (!whole) return false;
      if (v.start >= scan_ && v.start < tail_pos) return true;
      for (const HeldClaim& h : held_)
        if (h.pos == v.start) return true;
      return false;
    };
    if (names_claim(GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE)))) continue;
    bool foreign = false;
    if (ProbeIdentity(v.identity) != Owner::kDead) {
      // Alive: held by a put in flight, unless no process of the session
      // owns it (a forger filled the slots).
      if (OfSession(static_cast<pid_t>(GUARD_RING_IDENTITY_PID(v.identity)))) continue;
      foreign = true;
    }
    // Its claim may have landed since our first look (the owner died right
    // after its tail CAS): the tail, read again, says.
    if (names_claim(GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE)))) continue;
    // Its owner died inside the seqlock: make seq even again for the next
    // owner (nobody else writes it), before the identity store frees it.
    if (!whole) __atomic_fetch_add(&header_->slots[i].seq, 1, __ATOMIC_RELAXED);
    uint64_t expected = v.identity;
    // A dead owner changes nothing: the CAS only guards against our own
    // mistake (a forger may rewrite it; then it is the forger's again).
    // Release: our reads of the slot come before its next owner.
    if (__atomic_compare_exchange_n(&header_->slots[i].identity, &expected, 0, false, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED)) {
      ++counters_.freed_slots;
      if (foreign) ++counters_.foreign_claims;
    }
  }
}

bool RingConsumer::InData(uint64_t pos, uint64_t end, uint64_t tail_pos) const {
  return end > pos && end % GUARD_RING_ALIGNMENT == 0 && pos % GUARD_RING_ALIGNMENT == 0 && end <= tail_pos &&
         (pos & (capacity_ - 1)) + (end - pos) <= capacity_;
}

void RingConsumer::GiveUp(uint64_t at) {
  counters_.corrupt_at = at + 1;
  SayGone();  // header_ stays: other threads read the positions through it
}

RingConsumer::Delivery RingConsumer::Deliver(uint64_t pos, int32_t len, uint64_t tail_pos, const Handler& handler,
                                              size_t* delivered) {
  auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (pos & (capacity_ - 1)));
  // Every process of the session can write the ring: a length that no
  // producer of ours makes (not whole 8-byte units, shorter than a header,
  // past the end of the data or the last claim) leaves no way to find the
  // next record. The ring is given up: nothing more is delivered, and
  // producers that wait for room are told the consumer is gone (-EPIPE)
  // rather than wait for ever.
  const uint64_t n = static_cast<uint64_t>(len);
  // (Padding at the end of the data may be a single 8-byte unit.) Each
  // field is read once: a process of the session may rewrite it while we
  // look, and what is checked must be what is used.
  const uint32_t type = __atomic_load_n(&rec->type, __ATOMIC_RELAXED);
  const uint32_t payload_length = __atomic_load_n(&rec->payload_length, __ATOMIC_RELAXED);
  if (!InData(pos, pos + n, tail_pos) ||
      (type != GUARD_RING_TYPE_PADDING &&
       (n < GUARD_RING_RECORD_HEADER_SIZE || payload_length > n - GUARD_RING_RECORD_HEADER_SIZE))) {
    GiveUp(pos);
    return Delivery::kCorrupt;
  }
  if (type == GUARD_RING_TYPE_PADDING) {
    ++counters_.padding;
    return Delivery::kDone;
  }
  RingRecord r;
  r.position = pos;
  r.type = type;
  r.pid = static_cast<pid_t>(rec->pid);
  r.start_ticks = rec->start_ticks;
  r.payload = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(rec + 1), payload_length);
  if (!handler(r)) return Delivery::kRefused;
  ++*delivered;
  ++counters_.records;
  return Delivery::kDone;
}

bool RingConsumer::Revisit(const Handler& handler, size_t max, size_t* delivered, bool* reclaimed) {
  const uint64_t tail_pos = GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE));
  for (size_t i = 0; i < held_.size();) {
    const HeldClaim h = held_[i];
    auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (h.pos & (capacity_ - 1)));
    // Acquire: pairs with the producer's release store of the length.
    const int32_t len = __atomic_load_n(&rec->length, __ATOMIC_ACQUIRE);
    if (len > 0) {
      // Published: it must be the claim read past, whole, or nothing says
      // where the records after it (already read) were.
      if (static_cast<uint64_t>(len) != h.end - h.pos) {
        GiveUp(h.pos);
        return false;
      }
      if (*delivered >= max) return true;
      switch (Deliver(h.pos, len, tail_pos, handler, delivered)) {
        case Delivery::kDone: break;
        case Delivery::kRefused: return false;
        case Delivery::kCorrupt: return false;
      }
      held_.erase(held_.begin() + static_cast<long>(i));
      continue;
    }
    // Still unpublished: freed once its owner is dead (a stopped one is
    // held however long it stays stopped). Not probed from the scan
    // (reclaimed null): a /proc read per record would be the cost.
    if (reclaimed != nullptr && ProbeIdentity(h.owner) == Owner::kDead) {
      ++counters_.reclaimed;
      counters_.reclaimed_bytes += h.end - h.pos;
      *reclaimed = true;
      held_.erase(held_.begin() + static_cast<long>(i));
      continue;
    }
    ++i;
  }
  return true;
}

size_t RingConsumer::Drain(const Handler& handler, size_t max) {
  if (header_ == nullptr || counters_.corrupt_at != 0) return 0;
  const uint64_t mask = capacity_ - 1;
  size_t delivered = 0;
  bool reclaimed = false;
  blocked_ = false;
  const uint64_t head_before = head_;
  bool go_on = held_.empty() || Revisit(handler, max, &delivered, &reclaimed);
  FreeUpToHeld();
  while (go_on && delivered < max) {
    // Acquire: the claims up to tail_pos are ordered before what we read.
    uint64_t tail_pos = GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_ACQUIRE));
    if (scan_ == tail_pos) break;
    auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (scan_ & mask));
    // Acquire: pairs with the producer's release stores of the length.
    int32_t len = __atomic_load_n(&rec->length, __ATOMIC_ACQUIRE);
    if (len > 0) {
      // A held claim published since the Revisit above comes out before
      // this record: its owner may have published it, then claimed this
      // one. Our acquire load of this length then makes that publication
      // visible, so one look at the held claims keeps each producer's
      // records in its put order (ring_test
      // AProducersRecordPublishedAfterItsHeldClaimComesOutAfterIt).
      if (!held_.empty()) {
        const size_t held_before = held_.size();
        if (!Revisit(handler, max, &delivered, nullptr)) break;
        if (held_.size() != held_before) FreeUpToHeld();
        if (delivered >= max) break;
      }
      if (Deliver(scan_, len, tail_pos, handler, &delivered) != Delivery::kDone) break;
      Consumed(scan_ + static_cast<uint64_t>(len));
      stuck_at_ = UINT64_MAX;
      if (delivered % 64 == 0) WakeProducers();
      continue;
    }
    // Not published. Its owner is probably writing it right now: look at
    // the owner only if it was already unpublished when we last stopped here.
    if (stuck_at_ != scan_) {
      stuck_at_ = scan_;
      stuck_count_ = 1;
      blocked_ = true;
      break;
    }
    ++stuck_count_;
    HeldClaim claim;
    switch (Examine(scan_, len, tail_pos, &claim)) {
      case Stall::kUnknown:
        blocked_ = true;
        go_on = false;
        continue;
      case Stall::kCorrupt:
        GiveUp(scan_);
        go_on = false;
        continue;
      case Stall::kForeign:
        // Freed like a dead producer's claim, and never delivered: if it is
        // published later, nobody reads it (the scan is past it).
        ++counters_.foreign_claims;
        Consumed(claim.end);
        reclaimed = true;
        break;
      case Stall::kDead:
        ++counters_.reclaimed;
        counters_.reclaimed_bytes += claim.end - claim.pos;
        Consumed(claim.end);
        reclaimed = true;
        break;
      case Stall::kLive:
        // Read past: the records after it are delivered now; it keeps its
        // place (the head stays before it) until published or dead.
        if (held_.size() >= GUARD_RING_SLOTS) {
          blocked_ = true;
          go_on = false;
          continue;
        }
        held_.push_back(claim);
        ++counters_.read_past;
        scan_ = claim.end;
        break;
    }
    stuck_at_ = UINT64_MAX;
  }
  FreeUpToHeld();
  if (reclaimed || __atomic_load_n(&header_->slots_starved, __ATOMIC_RELAXED) != 0) {
    __atomic_store_n(&header_->slots_starved, 0, __ATOMIC_RELAXED);
    CollectDeadSlots();
    __atomic_fetch_add(&header_->space_seq, 1, __ATOMIC_RELEASE);
    FutexWakeAll(&header_->space_seq);
  } else if (head_ != head_before) {
    WakeProducers();
  }
  return delivered;
}

void RingConsumer::Wait(int timeout_ms) {
  if (header_ == nullptr || interrupted_.load(std::memory_order_seq_cst)) return;
  const long timeout_ns = timeout_ms * 1000000L;
  // The value to sleep on is read first: a producer that publishes after
  // this adds to it, and the futex then does not sleep.
  uint32_t seq = __atomic_load_n(&header_->data_seq, __ATOMIC_ACQUIRE);
  // seq_cst: read after our read of data_seq. Interrupt stores the flag
  // before it adds to data_seq, so either we see the flag here or the
  // futex below sees data_seq changed (or is woken).
  if (interrupted_.load(std::memory_order_seq_cst)) return;
  if (counters_.corrupt_at != 0) {
    // Given up: the record at the head is published and never delivered,
    // so the test below would say "ready" at once, and the caller spin. A
    // timed sleep on data_seq instead (not announced to producers: nothing
    // they publish is read any more), which Interrupt still ends.
    ring_os_futex_wait(&header_->data_seq, seq, timeout_ns);
    return;
  }
  __atomic_store_n(&header_->consumer_waiting, 1, __ATOMIC_RELAXED);
  // seq_cst fence: our flag before our look at the head record, against
  // the producer's publication before its look at the flag.
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  uint64_t tail_pos = GUARD_RING_TAIL_POSITION(__atomic_load_n(&header_->tail, __ATOMIC_RELAXED));
  auto* rec = reinterpret_cast<guard_ring_record*>(data_ + (scan_ & (capacity_ - 1)));
  bool ready = scan_ != tail_pos && __atomic_load_n(&rec->length, __ATOMIC_RELAXED) > 0;
  if (!ready) {
    ring_os_futex_wait(&header_->data_seq, seq, timeout_ns);
  }
  __atomic_store_n(&header_->consumer_waiting, 0, __ATOMIC_RELAXED);
}

void RingConsumer::Interrupt() {
  interrupted_.store(true, std::memory_order_seq_cst);
  if (header_ == nullptr) return;
  // The producers' publication signal, given by us: a Wait that read
  // data_seq before the add finds it changed, or is woken.
  __atomic_fetch_add(&header_->data_seq, 1, __ATOMIC_SEQ_CST);
  ring_os_futex_wake_all(&header_->data_seq);
}

}  // namespace guard
