/* ring_producer.h: putting records into the shared-memory ring (C, for the
 * shim; the C++ side uses it too, in tests and the benchmark).
 *
 * Lock-free and async-signal-safe: no allocation, no locks, no libc call that
 * is not async-signal-safe (raw futex, open/read/close of /proc/self/stat,
 * statx, getpid). A put may run in a signal handler that interrupted a put on
 * the same thread, in a child after fork, and in a vfork child. errno is left
 * as it was. docs/ring.md specifies the protocol.
 */
#ifndef GUARD_COMMON_RING_PRODUCER_H_
#define GUARD_COMMON_RING_PRODUCER_H_

#include <stddef.h>
#include <stdint.h>

#include "common/ring_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a put is, for tests that stop or kill a producer at a given point. */
enum guard_ring_phase {
  GUARD_RING_PHASE_SLOT_TAKEN = 1, /* a claim slot is ours, nothing claimed */
  GUARD_RING_PHASE_CLAIMED,        /* the tail CAS won; the header is still zero */
  GUARD_RING_PHASE_BEGUN,          /* the length is negative, the payload not copied */
  GUARD_RING_PHASE_FILLED,         /* the payload is copied, not yet published */
  GUARD_RING_PHASE_INTENDING,      /* inside the slot's seqlock: its seq is odd */
};

struct guard_ring_producer {
  struct guard_ring_header* header;
  unsigned char* data;
  uint64_t capacity;
  /* This process's identity, GUARD_RING_IDENTITY(pid, start), computed when
   * getpid() first differs from its pid (the first put, after fork, in a
   * vfork child). One u64, read and written with relaxed atomics: a vfork
   * child and the parent's other threads may rewrite it at once, and each
   * must see a whole value, never one process's pid with another's start. */
  uint64_t identity;
  /* How long a put waits for room, or for a free claim slot, before it
   * gives up with -ETIMEDOUT: 0 is GUARD_RING_WAIT_NS (tests set less). */
  int64_t wait_limit_ns;
  /* The consumer's head + 1 when a put of this process last gave up
   * waiting for room (0: never): while the head stays there, puts give up
   * at once instead of waiting the bound again. Relaxed atomics. */
  uint64_t gave_up_at;
  /* Give-back (docs/ring.md, "Pages a producer gives back"): 0, or a
   * power of two (at least a page): once a put of this process ends this
   * many bytes past resident_from, the pages of the data behind it are
   * dropped from this process's mapping (MADV_DONTNEED: the segment keeps
   * their content; a later touch maps them again), so that the pages it
   * wrote do not stay in its resident set. resident_from: a position at or
   * before the first such page this process may still map; relaxed atomics,
   * a hint. */
  uint64_t give_back_bytes;
  uint64_t resident_from;
  /* Tests only: called at each phase of a put (NULL otherwise). */
  void (*test_hook)(void* arg, enum guard_ring_phase phase);
  void* test_hook_arg;
};

/* The bound of a producer's wait for room or for a claim slot
 * (docs/ring.md, "Bounded waits"): 10 s in which the consumer's head does
 * not move (a slot wait: 10 s in all), and GUARD_RING_WAIT_ROUNDS times
 * that in all. The consumer is guard, which drains every 10 ms and which a
 * session cannot stop; a 16 MiB ring drains in milliseconds. A head that
 * stands still this long is pinned by a claim whose owner is stopped, or
 * forged, and the put falls back instead (the tracer under --mode auto,
 * the capture-failure policy alone). */
#define GUARD_RING_WAIT_NS (10LL * 1000 * 1000 * 1000)
#define GUARD_RING_WAIT_ROUNDS 6

/* What the shim sets give_back_bytes to: 64 KiB, one madvise a put in
 * about 200 of rm's, and at most 64 KiB of the data resident in a process
 * for the pages it wrote last (but those of records larger than that, each
 * given back at its end). */
#define GUARD_RING_GIVE_BACK_BYTES (64u * 1024u)

/* Checks the segment mapped at base (size bytes: magic, version, header
 * size, a capacity that matches size) and fills *p. Returns 0, or -EINVAL
 * (not a ring, or size wrong), -EPROTO (another version). */
int guard_ring_producer_init(struct guard_ring_producer* p, void* base, size_t size);

/* 0 when the process whose pid (just asked of the kernel) is `pid` can put
 * records: its identity is known, and it is in the consumer's pid
 * namespace; else the negative errno a put would fail with. Cheap once the
 * identity is cached (one load). */
int guard_ring_producer_usable(struct guard_ring_producer* p, int pid);

/* One piece of a record's payload, for guard_ring_putv. */
struct guard_ring_part {
  const void* data;
  uint32_t length;
};

/* Appends one record of the given type (>= GUARD_RING_TYPE_PENDING_FILE; not
 * padding) whose payload is the parts, in order. Returns once the record is
 * published (the consumer may read it), or a negative errno:
 *   -EINVAL    type is padding or 0
 *   -EMSGSIZE  the record is longer than the ring
 *   -EPIPE     the ring is full and its consumer is gone (detached, or its
 *              process dead); nothing was written
 *   -EDEADLK   a put nested inside another put of this thread (a signal
 *              handler) needs room that only the interrupted put can free
 *   -EXDEV     this process is in another pid namespace than the ring's
 *   -ESRCH     this process's start time could not be read from /proc
 *   -ETIMEDOUT no room came while the consumer's head stood still for the
 *              producer's wait limit (GUARD_RING_WAIT_NS), or in six of
 *              them in all; or no free claim slot within it; nothing was
 *              written
 * A full ring is waited for (futex), never dropped from, within the bound. */
int guard_ring_putv(struct guard_ring_producer* p, uint32_t type,
                    const struct guard_ring_part* parts, int count);
int guard_ring_put(struct guard_ring_producer* p, uint32_t type, const void* payload, uint32_t len);

/* guard_ring_putv for a caller that has asked getpid() itself during the
 * same call (the shim asks once per captured call, for its pending names
 * too): `pid` must be the calling process's own, as the kernel gave it
 * since the last fork, vfork or clone. A pid from before one would claim
 * slots under another process's identity, which the consumer would reclaim
 * when that process dies, or never. */
int guard_ring_putv_as(struct guard_ring_producer* p, int pid, uint32_t type,
                       const struct guard_ring_part* parts, int count);

/* The tail of a record that the producer writes in place, after the parts:
 * fn gets the claimed room (room bytes, right after the parts' copies) and
 * returns how many of them it filled (0..room), or a negative errno. The
 * record's payload is then the parts and the bytes filled. A fill that
 * fails turns the claim into padding, which the consumer skips, and the put
 * returns its errno. fn runs inside the put (the claim held, after
 * GUARD_RING_PHASE_BEGUN): what it may call is what the put may, and the
 * consumer waits for the record while it runs. */
struct guard_ring_fill {
  uint32_t room;
  long (*fn)(void* arg, unsigned char* to, uint32_t room);
  void* arg;
};

/* guard_ring_putv_as with a payload that ends in `fill`'s bytes (the shim
 * reads a small pre-image straight into its CALL record this way). */
int guard_ring_putv_fill_as(struct guard_ring_producer* p, int pid, uint32_t type,
                            const struct guard_ring_part* parts, int count, const struct guard_ring_fill* fill);

/* Field 22 of /proc/PID/stat for pid (0 for this process), or 0 when it
 * cannot be read. The consumer compares it with a record's start_ticks. */
uint64_t guard_ring_start_ticks(int pid);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_COMMON_RING_PRODUCER_H_ */
