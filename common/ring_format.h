/* ring_format.h: the layout of the shared-memory ring that carries the shim's
 * records to the supervisor (docs/ring.md is the prose specification).
 *
 * One header for C (the shim, built without libstdc++) and C++ (the consumer,
 * the segment, the tests). Every shared field is a plain integer accessed
 * only through GCC's __atomic builtins, so that both languages see one layout
 * (neither std::atomic nor C11 _Atomic, whose representations are not
 * promised to match). The memory order of each access is written beside the
 * field it touches, here and at each use.
 *
 * The segment:  [guard_ring_header: GUARD_RING_HEADER_SIZE bytes][data: capacity bytes]
 * Positions are 64-bit byte counts that only grow; a position's place in the
 * data is (position & (capacity - 1)). Records never straddle the end of the
 * data: a padding record fills the rest of it instead.
 */
#ifndef GUARD_COMMON_RING_FORMAT_H_
#define GUARD_COMMON_RING_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "GRDRING\0" read as a little-endian u64. */
#define GUARD_RING_MAGIC UINT64_C(0x00474e4952445247)
/* Version 2 (session 11: a CALL may carry its path1's content inline,
 * common/shim_record.h; version 1 had no such records, and a version-1
 * consumer would take one for a call without a pre-image). A reader
 * refuses any other: the layout has no optional parts. */
#define GUARD_RING_VERSION 2u

#define GUARD_RING_CACHE_LINE 64u
/* Records start on 8-byte boundaries, so that the length word of every
 * header is naturally aligned for the atomic loads and stores below. */
#define GUARD_RING_ALIGNMENT 8u
/* Claim slots: one per put in flight, whatever the process or thread (a
 * signal handler's put takes a slot of its own). 128 puts at once is far more
 * than a session's threads ever have inside a put; a put that finds none free
 * waits, like one that finds the ring full. */
#define GUARD_RING_SLOTS 128u
/* The tail's slot field when no claim has been made yet. */
#define GUARD_RING_NO_SLOT 0xffu
/* Where the data starts: the header rounded up to whole pages. */
#define GUARD_RING_HEADER_SIZE 12288u
/* Data capacity: a power of two, at least one page, at most 1 GiB (a record's
 * length is an int32 and may be as long as the data). */
/* Name locks (docs/ring.md, "Name locks"): one word per hash bucket of
 * absolute names, a power of two. */
#define GUARD_RING_NAME_LOCKS 512u
/* A name lock word: the owner's thread id in the low 22 bits (0: free), a
 * generation in the next 9 (bumped by every release, so that a producer
 * that looked at a name before taking its lock can tell whether anyone
 * changed it meanwhile), and WAITERS (someone sleeps on the word). */
#define GUARD_RING_LOCK_TID_MASK ((UINT32_C(1) << 22) - 1)
#define GUARD_RING_LOCK_GEN_ONE (UINT32_C(1) << 22)
#define GUARD_RING_LOCK_GEN_MASK (((UINT32_C(1) << 9) - 1) << 22)
#define GUARD_RING_LOCK_WAITERS (UINT32_C(1) << 31)

/* The name lock bucket of an absolute name (its bytes, no NUL): FNV-1a. A
 * collision only makes two names wait for each other. The shim takes the
 * locks; the supervisor reads them (a traced call waits for a shim call in
 * flight on its name). */
static inline uint32_t guard_ring_name_lock_index(const char* abs, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; ++i) {
    h ^= (unsigned char)abs[i];
    h *= 16777619u;
  }
  return h & (GUARD_RING_NAME_LOCKS - 1);
}
#define GUARD_RING_MIN_CAPACITY 4096u
#define GUARD_RING_MAX_CAPACITY (UINT64_C(1) << 30)

/* Record types. The ring carries bytes: what a type >= FIRST_USER means is
 * the business of the producer and the consumer that agree on it (the
 * shim's mutation records, defined when the shim is wired to capture). */
#define GUARD_RING_TYPE_PADDING 1u      /* fills the end of the data, or a claim whose fill
                                           failed (guard_ring_putv_fill_as); skipped */
#define GUARD_RING_TYPE_PENDING_FILE 2u /* a pre-image too large for the ring:
                                           struct guard_ring_pending_file */
#define GUARD_RING_TYPE_FIRST_USER 16u

/* A process, as the consumer tells it apart: its pid (what getpid returns)
 * and its start time (field 22 of /proc/PID/stat, in clock ticks since
 * boot), so that a reused pid is not taken for the dead owner. Packed in one
 * u64 so that it is read and written whole: pid in the low 22 bits (Linux's
 * pid_max is at most 2^22), start time above. 0 is no process. */
#define GUARD_RING_PID_BITS 22u
#define GUARD_RING_IDENTITY(pid, start_ticks) \
  (((uint64_t)(start_ticks) << GUARD_RING_PID_BITS) | (uint64_t)(uint32_t)(pid))
#define GUARD_RING_IDENTITY_PID(id) ((uint32_t)((id) & ((UINT64_C(1) << GUARD_RING_PID_BITS) - 1)))
#define GUARD_RING_IDENTITY_START(id) ((uint64_t)(id) >> GUARD_RING_PID_BITS)

/* The tail word names the end of the last claim and the slot that made it:
 * (position / 8) << 8 | slot. Naming the slot is what lets the consumer find
 * the owner of a claim that was made but whose header is still zero (the
 * owner died between its claim and its first store: docs/ring.md, "Who owns
 * a claim"). 56 bits of 8-byte units never wrap (2^59 bytes). */
#define GUARD_RING_TAIL(position, slot) ((((uint64_t)(position) >> 3) << 8) | (uint64_t)(slot))
#define GUARD_RING_TAIL_POSITION(tail) (((uint64_t)(tail) >> 8) << 3)
#define GUARD_RING_TAIL_SLOT(tail) ((uint32_t)((tail) & 0xffu))

/* A claim slot's claim word: the end position of the claim its owner is
 * making, with WON set by the producer that makes the next claim once this
 * one is the claim the tail went through (see guard_ring_put). */
#define GUARD_RING_CLAIM_WON (UINT64_C(1) << 63)

struct guard_ring_slot {
  /* The owner's identity, 0 when free. Taken by CAS 0 -> identity
   * (acquire: the slot's previous use is over before ours starts); released
   * by a store of 0 (release: our stores to the slot come before the next
   * owner's). The consumer frees the slot of a dead owner by CAS. */
  uint64_t identity;
  /* Seqlock over start and claim: odd while the owner rewrites them (it
   * does, once per failed CAS on the tail). Incremented with release
   * stores around the rewrite; the consumer reads it with acquire loads
   * before and after reading both, and retries on a change. */
  uint32_t seq;
  uint32_t reserved0;
  /* The position the owner is trying to claim from (relaxed stores inside
   * the seqlock; the CAS on the tail that follows is release). */
  uint64_t start;
  /* The end of that claim, | GUARD_RING_CLAIM_WON once known to have won
   * (relaxed stores inside the seqlock by the owner; the WON bit by CAS
   * acq_rel from the next claimant). */
  uint64_t claim;
  uint8_t pad[GUARD_RING_CACHE_LINE - 32];
};

struct guard_ring_header {
  /* Line 0: written once by the creator before any producer can map the
   * segment (the segment's name is not known to anyone yet), then read-only
   * but for shim_mismatch: plain loads. */
  uint64_t magic;       /* GUARD_RING_MAGIC */
  uint32_t version;     /* GUARD_RING_VERSION */
  uint32_t header_size; /* GUARD_RING_HEADER_SIZE: where the data starts */
  uint64_t capacity;    /* bytes of data, a power of two */
  uint64_t pid_ns;      /* inode of the creator's /proc/self/ns/pid: a producer
                           in another pid namespace would name itself by pids
                           the consumer cannot see, so it is refused */
  /* The one word of line 0 that is written after the start: 0 until a shim
   * that does not speak the session's protocol says so (common/shim_interface.h,
   * GUARD_SHIM_MISMATCH_*). Set by CAS from 0, relaxed: nothing else is
   * published with it; the supervisor polls it (relaxed load). Where version 2
   * segments had zeroes, so version 2 stands. */
  uint32_t shim_mismatch;
  /* Fail closed: 0 until the supervisor saw what no honest producer makes
   * (forged framing, a claim owned by no process of the session: docs/ring.md,
   * "Failing closed"); then 1, and the shim puts no more CALLs: it leaves
   * every call to the real function (the tracer under --mode auto, the
   * capture-failure policy alone). Set by the supervisor only (relaxed store:
   * nothing is published with it); read by the shim before each CALL
   * (relaxed load). A process that clears it gets the fast path back, never
   * a hidden call: the supervisor keeps the flag in its memory and journal.
   * Where version 2 segments had zeroes, so version 2 stands. */
  uint32_t fail_closed;
  uint8_t pad0[GUARD_RING_CACHE_LINE - 40];

  /* Line 1: the consumer. */
  /* Identity of the attached consumer, 0 when none (relaxed: producers only
   * read it to decide to give up a wait, and re-read it every time). */
  uint64_t consumer;
  /* Non-zero while the consumer sleeps on data_seq. Store by the consumer,
   * then a seq_cst fence, then its last look at the head record; a producer
   * publishes, fences seq_cst, then loads this: one of the two sees the
   * other (Dekker), so a wake-up is never lost. A producer wakes it only
   * when an eighth of the ring is used or it must wait for room, and clears
   * it by exchange so that one producer makes the FUTEX_WAKE. */
  uint32_t consumer_waiting;
  /* Futex word the consumer sleeps on: producers add 1 (release) before
   * FUTEX_WAKE, so a sleep that started from an older value returns. The
   * consumer's own process adds 1 too, to end its wait at a session's end
   * (RingConsumer::Interrupt); producers never read it but in the futex. */
  uint32_t data_seq;
  /* Set to 1 by a producer that found every claim slot taken (relaxed: a
   * hint to look for the slots of dead owners; the wait itself is on
   * space_seq). */
  uint32_t slots_starved;
  uint8_t pad1[GUARD_RING_CACHE_LINE - 20];

  /* Line 2: the producers' claim word, GUARD_RING_TAIL(end of the last claim,
   * its slot). Loaded acquire (a claim that read it sees the claim slot of
   * the claimant it names, written before that claimant's CAS); advanced only
   * by CAS acq_rel. */
  uint64_t tail;
  uint8_t pad2[GUARD_RING_CACHE_LINE - 8];

  /* Line 3: the consumer's position: everything before it is free and zero.
   * Stored seq_cst by the consumer after it zeroed what it consumed (release
   * is what the zeroes need; seq_cst pairs with space_waiters below). Loaded
   * acquire by producers before they write into what it frees. */
  uint64_t head;
  /* The end of what the consumer is zeroing, stored (release) before it
   * zeroes [head, freeing_end) and then moves head there. A consumer that
   * dies in between leaves it beyond head, and the next one (recovery)
   * finishes the job instead of reading a half-zeroed record. */
  uint64_t freeing_end;
  uint8_t pad3[GUARD_RING_CACHE_LINE - 16];

  /* Line 4: producers waiting for space (or for a slot). A producer reads
   * space_seq (acquire), increments space_waiters (seq_cst), re-reads head
   * (seq_cst) and sleeps on space_seq only if there is still no room; the
   * consumer stores head (seq_cst), adds 1 to space_seq, and wakes all if
   * space_waiters is non-zero (seq_cst load): a waiter that registered after
   * that load has re-read the new head. */
  uint32_t space_seq;
  uint32_t space_waiters;
  uint8_t pad4[GUARD_RING_CACHE_LINE - 8];

  struct guard_ring_slot slots[GUARD_RING_SLOTS];

  /* The name locks, the producers' (the supervisor only reads them: a
   * traced call waits while another thread's shim call holds its name's): taken
   * by CAS (acquire) from a word without an owner to one with the taker's
   * tid, released by CAS (release) to a free word of the next generation,
   * then FUTEX_WAKE when WAITERS was set. A waiter sets WAITERS by CAS
   * (relaxed: the FUTEX_WAIT compares the word) before it sleeps. They lie
   * where version 2 segments had zeroes (free, generation 0), so version 2
   * stands: a consumer reads records exactly as before. */
  uint32_t name_locks[GUARD_RING_NAME_LOCKS];
};

/* Each record starts with this header, at an 8-byte aligned position, and
 * occupies GUARD_RING_RECORD_SIZE(payload_length) bytes. */
struct guard_ring_record {
  /* The record's whole length in bytes (header, payload and alignment). 0:
   * not claimed yet, or claimed and not yet begun. Negative: being filled
   * (a store release after the owner fields below, so that a reader who sees
   * it negative knows whose it is). Positive: published (store release after
   * the payload: a reader that loads it acquire sees the payload). Back to 0
   * when the consumer frees it (plain zeroing, published by its head store). */
  int32_t length;
  uint32_t type;           /* GUARD_RING_TYPE_*; relaxed before the length */
  uint32_t payload_length; /* bytes of payload that follow the header */
  uint32_t pid;            /* the producer's pid (getpid) */
  uint64_t start_ticks;    /* the producer's start time, /proc/PID/stat field 22 */
};

#define GUARD_RING_RECORD_HEADER_SIZE 24u
#define GUARD_RING_ALIGN(n) (((uint64_t)(n) + GUARD_RING_ALIGNMENT - 1) & ~(uint64_t)(GUARD_RING_ALIGNMENT - 1))
#define GUARD_RING_RECORD_SIZE(payload_length) \
  GUARD_RING_ALIGN((uint64_t)GUARD_RING_RECORD_HEADER_SIZE + (uint64_t)(payload_length))
/* The largest payload a ring of this capacity takes: a record as long as the
 * whole data (it waits for the ring to be empty and at the start). */
#define GUARD_RING_MAX_PAYLOAD(capacity) ((uint64_t)(capacity) - GUARD_RING_RECORD_HEADER_SIZE)

/* Payload of GUARD_RING_TYPE_PENDING_FILE: a pre-image the producer put in
 * the session's pending area (by link or rename, or a copy) before the call
 * that changes the file, because it is too large for the ring. The name is
 * relative to the pending directory, one component (no '/', not "." or
 * ".."), name_length bytes, not NUL-terminated. What the pre-image belongs
 * to is said by the record that follows it from the same producer. */
struct guard_ring_pending_file {
  uint64_t size;        /* bytes of the file when it was put there */
  uint32_t flags;       /* GUARD_RING_PENDING_* */
  uint32_t name_length; /* 1..255 */
  /* char name[name_length]; */
};
#define GUARD_RING_PENDING_LINKED 1u /* the original inode, linked or renamed in */
#define GUARD_RING_PENDING_COPIED 2u /* a copy of the content */
#define GUARD_RING_PENDING_NAME_MAX 255u

#ifdef __cplusplus
}  /* extern "C" */
static_assert(sizeof(struct guard_ring_slot) == GUARD_RING_CACHE_LINE);
static_assert(sizeof(struct guard_ring_header) <= GUARD_RING_HEADER_SIZE);
static_assert(sizeof(struct guard_ring_record) == GUARD_RING_RECORD_HEADER_SIZE);
static_assert(sizeof(struct guard_ring_pending_file) == 16);
static_assert(GUARD_RING_SLOTS < GUARD_RING_NO_SLOT);
#else
_Static_assert(sizeof(struct guard_ring_slot) == GUARD_RING_CACHE_LINE, "slot is one line");
_Static_assert(sizeof(struct guard_ring_header) <= GUARD_RING_HEADER_SIZE, "header fits");
_Static_assert(sizeof(struct guard_ring_record) == GUARD_RING_RECORD_HEADER_SIZE, "record header");
#endif

#endif /* GUARD_COMMON_RING_FORMAT_H_ */
