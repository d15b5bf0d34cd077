/* ring_producer.c: the producer side of the ring (docs/ring.md, "Putting a
 * record"). C, so that the shim can carry it without libstdc++; no
 * allocation; only async-signal-safe calls (raw syscalls, memcpy). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/ring_producer.h"

#include <errno.h>
#include <string.h>

/* The system calls a put makes (common/ring_os.h): on Linux through libc's
 * syscall(), unless the shim's build sets its own (interpose/linux/platform.c),
 * from its stub, since the shim interposes syscall() and the filter would
 * stop the calls it makes. */
#ifdef GUARD_RING_SYSCALL
long GUARD_RING_SYSCALL(long nr, ...);
#endif
#include "common/ring_os.h"

/* This thread's unpublished claims: how many puts of this thread are between
 * their claim and their publication (more than one only when a signal
 * handler's put interrupted a put), and where the outermost one starts. A
 * nested put may wait for room only if the consumer can make it without
 * passing that position, which it cannot pass until the interrupted put,
 * and so this handler, returns. A vfork child shares its parent thread's
 * copy, which is consistent because the parent is not inside a put while it
 * is suspended in vfork. Initial-exec: the shim is preloaded, and a dynamic
 * TLS access may allocate. */
static __thread uint32_t held_depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t held_start __attribute__((tls_model("initial-exec")));

/* How long a producer sleeps before it checks that the consumer of a full
 * ring is still there (and how far it is into its wait's bound). */
#define GUARD_RING_CONSUMER_CHECK_NS 1000000000L
/* How long a producer that found no free claim slot sleeps before it looks
 * again (slots are freed by other producers, which do not wake anyone). */
#define GUARD_RING_SLOT_RETRY_NS 1000000L

/* The bound of this producer's waits (docs/ring.md, "Bounded waits"). */
static int64_t wait_limit(const struct guard_ring_producer* p) {
  return p->wait_limit_ns > 0 ? p->wait_limit_ns : GUARD_RING_WAIT_NS;
}

uint64_t guard_ring_start_ticks(int pid) { return ring_os_start_ticks(pid); }

/* This process's identity: cached, recomputed when the pid (the caller's
 * own, just asked of the kernel) is not the cached one (a fork or vfork
 * child, or the first put). */
static int current_identity(struct guard_ring_producer* p, uint32_t pid, uint64_t* out) {
  /* Relaxed: the value is self-contained; a stale one has the wrong pid and
   * is recomputed. */
  uint64_t id = __atomic_load_n(&p->identity, __ATOMIC_RELAXED);
  if (id != 0 && GUARD_RING_IDENTITY_PID(id) == pid) {
    *out = id;
    return 0;
  }
  if (pid >= (1u << GUARD_RING_PID_BITS)) return -ESRCH;
  if (p->header->pid_ns != 0 && ring_os_pid_ns_inode() != p->header->pid_ns) return -EXDEV;
  uint64_t start = guard_ring_start_ticks(0);
  if (start == 0) return -ESRCH;
  id = GUARD_RING_IDENTITY(pid, start);
  __atomic_store_n(&p->identity, id, __ATOMIC_RELAXED);
  *out = id;
  return 0;
}

int guard_ring_producer_usable(struct guard_ring_producer* p, int pid) {
  uint64_t id = 0;
  if (p->header == NULL || pid <= 0) return -EINVAL;
  return current_identity(p, (uint32_t)pid, &id);
}

int guard_ring_producer_init(struct guard_ring_producer* p, void* base, size_t size) {
  memset(p, 0, sizeof *p);
  if (base == NULL || size < GUARD_RING_HEADER_SIZE) return -EINVAL;
  struct guard_ring_header* h = (struct guard_ring_header*)base;
  if (h->magic != GUARD_RING_MAGIC) return -EINVAL;
  if (h->version != GUARD_RING_VERSION) return -EPROTO;
  uint64_t cap = h->capacity;
  if (h->header_size != GUARD_RING_HEADER_SIZE || cap < GUARD_RING_MIN_CAPACITY ||
      cap > GUARD_RING_MAX_CAPACITY || (cap & (cap - 1)) != 0 ||
      (uint64_t)size != (uint64_t)GUARD_RING_HEADER_SIZE + cap)
    return -EINVAL;
  p->header = h;
  p->data = (unsigned char*)base + GUARD_RING_HEADER_SIZE;
  p->capacity = cap;
  return 0;
}

/* The consumer is gone if none is attached, or its process is dead or is
 * another process under the same pid. */
static int consumer_gone(const struct guard_ring_header* h) {
  uint64_t c = __atomic_load_n(&h->consumer, __ATOMIC_RELAXED);
  if (c == 0) return 1;
  return guard_ring_start_ticks((int)GUARD_RING_IDENTITY_PID(c)) != GUARD_RING_IDENTITY_START(c);
}

/* Waits until the consumer's head reaches target (so that a claim ending at
 * target + capacity fits), for at most the producer's wait limit. */
static int wait_for_head(struct guard_ring_producer* p, uint64_t target) {
  struct guard_ring_header* h = p->header;
  if (held_depth > 0 && target > held_start) return -EDEADLK;
  /* A put of this process gave up at this very head: it has not moved
   * since (a claim holds it, which the consumer reads past but cannot free
   * while its owner lives), so waiting again would only wait the bound
   * again. Relaxed: a hint; a stale value costs one wait or one fallback. */
  uint64_t last_head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
  if (__atomic_load_n(&p->gave_up_at, __ATOMIC_RELAXED) == last_head + 1) return -ETIMEDOUT;
  /* The bound runs while the head stands still: a consumer that makes
   * progress, however slowly (a loaded machine), is waited for, up to
   * GUARD_RING_WAIT_ROUNDS bounds in all (other producers could take every
   * room it makes). */
  const int64_t start = ring_os_now_ns();
  const int64_t last_resort = start + GUARD_RING_WAIT_ROUNDS * wait_limit(p);
  int64_t deadline = start + wait_limit(p);
  for (;;) {
    /* Acquire: pairs with the consumer's add after its head store; the
     * value is what the futex compares against. */
    uint32_t seq = __atomic_load_n(&h->space_seq, __ATOMIC_ACQUIRE);
    /* seq_cst, with the head load below and the consumer's head store and
     * waiters load: either it sees us waiting or we see its new head. */
    __atomic_fetch_add(&h->space_waiters, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->head, __ATOMIC_SEQ_CST) >= target) {
      __atomic_fetch_sub(&h->space_waiters, 1, __ATOMIC_SEQ_CST);
      return 0;
    }
    int64_t left = deadline - ring_os_now_ns();
    long rc = left <= 0 ? -1
                        : ring_os_futex_wait(&h->space_seq, seq, left < GUARD_RING_CONSUMER_CHECK_NS ? left
                                                                                      : GUARD_RING_CONSUMER_CHECK_NS);
    int timed_out = left <= 0 || (rc != 0 && errno == ETIMEDOUT);
    __atomic_fetch_sub(&h->space_waiters, 1, __ATOMIC_SEQ_CST);
    uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
    if (head >= target) return 0;
    /* A detaching consumer stores 0 and wakes everyone: no need to wait for
     * the timeout to notice. A dead one is noticed at the timeout. */
    if (__atomic_load_n(&h->consumer, __ATOMIC_RELAXED) == 0) return -EPIPE;
    if (timed_out && consumer_gone(h)) return -EPIPE;
    const int64_t now = ring_os_now_ns();
    if (head != last_head) {
      last_head = head;
      deadline = now + wait_limit(p);
      if (deadline > last_resort) deadline = last_resort;
    }
    if (now >= deadline) {
      __atomic_store_n(&p->gave_up_at, head + 1, __ATOMIC_RELAXED);
      return -ETIMEDOUT;
    }
  }
}

static int acquire_slot(struct guard_ring_producer* p, uint64_t identity, uint32_t* out) {
  struct guard_ring_header* h = p->header;
  /* Start the search at a place that differs between threads (their stacks)
   * and processes, so that concurrent puts rarely contend for one slot. */
  uintptr_t spread = ((uintptr_t)__builtin_frame_address(0) >> 12) ^ (uintptr_t)(identity * 0x9e3779b97f4a7c15ull >> 40);
  int64_t deadline = 0;
  for (;;) {
    for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) {
      uint32_t s = (uint32_t)((spread + i) % GUARD_RING_SLOTS);
      uint64_t* owner = &h->slots[s].identity;
      uint64_t expected = 0;
      /* Relaxed peek, then CAS acquire: see the field comment. */
      if (__atomic_load_n(owner, __ATOMIC_RELAXED) == 0 &&
          __atomic_compare_exchange_n(owner, &expected, identity, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        *out = s;
        return 0;
      }
    }
    /* Every slot is taken: by puts in flight (they end soon) or by dead
     * producers (the consumer frees those when it sees this flag). */
    __atomic_store_n(&h->slots_starved, 1, __ATOMIC_RELAXED);
    uint32_t seq = __atomic_load_n(&h->space_seq, __ATOMIC_ACQUIRE);
    /* The clock is read only once slots ran out, so a put that finds one
     * at once pays nothing for the bound. */
    int64_t now = ring_os_now_ns();
    if (deadline == 0) deadline = now + wait_limit(p);
    if (now >= deadline) return -ETIMEDOUT;
    ring_os_futex_wait(&h->space_seq, seq, GUARD_RING_SLOT_RETRY_NS);
    if (consumer_gone(h)) return -EPIPE;
  }
}

static void hook(struct guard_ring_producer* p, enum guard_ring_phase phase);

/* Rewrites the claim this slot is making, under its seqlock. A producer
 * that dies in here leaves seq odd: the consumer then takes the slot for
 * torn, never waits on it, and frees it once its owner is dead (its claim
 * never landed: the tail CAS comes after). */
static void slot_intend(struct guard_ring_producer* p, struct guard_ring_slot* s, uint64_t start, uint64_t end) {
  /* Only the owner writes seq: a relaxed read of our own value. */
  uint32_t q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
  __atomic_store_n(&s->seq, q + 1, __ATOMIC_RELAXED);
  /* Release fence: a reader that sees the new start/claim also sees seq odd. */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  hook(p, GUARD_RING_PHASE_INTENDING);
  __atomic_store_n(&s->start, start, __ATOMIC_RELAXED);
  __atomic_store_n(&s->claim, end, __ATOMIC_RELAXED);
  /* Release: start and claim come before the even seq. */
  __atomic_store_n(&s->seq, q + 2, __ATOMIC_RELEASE);
}

static void hook(struct guard_ring_producer* p, enum guard_ring_phase phase) {
  if (p->test_hook != NULL) p->test_hook(p->test_hook_arg, phase);
}

/* Wakes the consumer if it sleeps and there is enough to make waking it
 * worth a system call: an eighth of the ring, or always when we are about to
 * wait for room (force). A record is durable once it is in the segment, so a
 * consumer that sleeps a little longer loses nothing; its own timeout bounds
 * how long records sit before it drains them. */
static void wake_consumer(struct guard_ring_header* h, uint64_t capacity, int force) {
  /* seq_cst fence between our publishing store and this load, against the
   * consumer's store of consumer_waiting, fence, and load of the head
   * record's length: see the field comment. */
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (__atomic_load_n(&h->consumer_waiting, __ATOMIC_RELAXED) == 0) return;
  if (!force) {
    /* Relaxed: an estimate; the consumer's timeout covers a wrong one. */
    uint64_t used = GUARD_RING_TAIL_POSITION(__atomic_load_n(&h->tail, __ATOMIC_RELAXED)) -
                    __atomic_load_n(&h->head, __ATOMIC_RELAXED);
    if (used < capacity / 8) return;
  }
  /* Only the producer that clears the flag wakes (relaxed: the futex word
   * below carries the ordering the consumer needs). */
  if (__atomic_exchange_n(&h->consumer_waiting, 0, __ATOMIC_RELAXED) == 0) return;
  /* Release: nothing needs it but the futex's value check. */
  __atomic_fetch_add(&h->data_seq, 1, __ATOMIC_RELEASE);
  ring_os_futex_wake_all(&h->data_seq);
}

/* Drops this process's mapping of the data pages before the page of
 * position `end` that it may still map, at most once every give_back_bytes
 * (a put of 300 bytes makes one madvise in about 200). MADV_DONTNEED on a
 * shared mapping removes page-table entries only: what the pages hold stays
 * in the segment, for the consumer and for any thread of this process
 * still writing there, which maps the page again on its next touch. */
#define GUARD_RING_PAGE 4096u
static void give_back(struct guard_ring_producer* p, uint64_t end) {
  const uint64_t every = p->give_back_bytes;
  if (every == 0) return;
  const uint64_t cap = p->capacity;
  uint64_t from = __atomic_load_n(&p->resident_from, __ATOMIC_RELAXED) & ~(uint64_t)(GUARD_RING_PAGE - 1);
  const uint64_t to = end & ~(uint64_t)(GUARD_RING_PAGE - 1);
  if (to <= from || to - from < every) return;
  __atomic_store_n(&p->resident_from, to, __ATOMIC_RELAXED);
  if (to - from > cap) from = to - cap; /* a lap or more: the whole data but the page of `end` */
  const uint64_t at = from & (cap - 1);
  const uint64_t len = to - from;
  const uint64_t first = len < cap - at ? len : cap - at;
  ring_os_give_back(p->data + at, (size_t)first);
  if (first < len) ring_os_give_back(p->data, (size_t)(len - first));
}

static int put(struct guard_ring_producer* p, uint32_t pid, uint32_t type, const struct guard_ring_part* parts,
               int count, const struct guard_ring_fill* fill) {
  struct guard_ring_header* h = p->header;
  if (h == NULL) return -EINVAL;
  if (type == 0 || type == GUARD_RING_TYPE_PADDING || count < 0) return -EINVAL;
  if (fill != NULL && fill->fn == NULL) return -EINVAL;
  uint64_t parts_len = 0;
  for (int i = 0; i < count; ++i) parts_len += parts[i].length;
  const uint64_t len = parts_len + (fill != NULL ? fill->room : 0);
  const uint64_t cap = p->capacity;
  const uint64_t mask = cap - 1;
  if (len > GUARD_RING_MAX_PAYLOAD(cap)) return -EMSGSIZE;
  const uint64_t need = GUARD_RING_RECORD_SIZE(len);

  uint64_t identity = 0;
  int rc = current_identity(p, pid, &identity);
  if (rc != 0) return rc;
  uint32_t s = 0;
  uint64_t end = 0; /* the published record's end */
  rc = acquire_slot(p, identity, &s);
  if (rc != 0) return rc;
  struct guard_ring_slot* mine = &h->slots[s];
  hook(p, GUARD_RING_PHASE_SLOT_TAKEN);

  for (;;) {
    /* Acquire: if the tail names a claimant, its slot's start and claim,
     * written before its CAS (release), are visible to our help below. */
    uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
    const uint64_t pos = GUARD_RING_TAIL_POSITION(tail);
    const uint32_t prev = GUARD_RING_TAIL_SLOT(tail);
    /* A record never straddles the end of the data: if it does not fit in
     * what is left, claim what is left as padding first. */
    const uint64_t left = cap - (pos & mask);
    const int padding = need > left;
    const uint64_t n = padding ? left : need;

    /* Acquire: the consumer zeroed what it freed before its head store. */
    uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
    if (pos + n - head > cap) {
      wake_consumer(h, cap, 1);
      rc = wait_for_head(p, pos + n - cap);
      if (rc != 0) break;
      continue;
    }

    /* Say what we are about to claim before we claim it, so that the
     * consumer can tell whose claim it is if we die right after the CAS. */
    slot_intend(p, mine, pos, pos + n);
    /* The claim the tail names won: mark it so in its slot before we move
     * the tail past it, after which nothing else would say who made it.
     * acq_rel: ordered before our tail CAS. Fails harmlessly if that slot
     * has moved on (its claim was published). */
    if (prev != GUARD_RING_NO_SLOT) {
      uint64_t expected = pos;
      __atomic_compare_exchange_n(&h->slots[prev].claim, &expected, pos | GUARD_RING_CLAIM_WON, 0,
                                  __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
    /* Count the claim as held by this thread from just before the CAS, so
     * that a signal handler's put that runs right after it knows. */
    if (held_depth++ == 0) held_start = pos;
    /* acq_rel: our slot's intent and the help above come before the new
     * tail; a failure reloads it (acquire) for the next try. */
    if (!__atomic_compare_exchange_n(&h->tail, &tail, GUARD_RING_TAIL(pos + n, s), 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      --held_depth;
      continue;
    }

    struct guard_ring_record* rec = (struct guard_ring_record*)(p->data + (pos & mask));
    if (padding) {
      __atomic_store_n(&rec->type, GUARD_RING_TYPE_PADDING, __ATOMIC_RELAXED);
      /* Release: the type before the length. */
      __atomic_store_n(&rec->length, (int32_t)n, __ATOMIC_RELEASE);
      --held_depth;
      continue; /* now the record itself, at the start of the data */
    }
    hook(p, GUARD_RING_PHASE_CLAIMED);
    __atomic_store_n(&rec->type, type, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->payload_length, (uint32_t)len, __ATOMIC_RELAXED);
    __atomic_store_n(&rec->pid, GUARD_RING_IDENTITY_PID(identity), __ATOMIC_RELAXED);
    __atomic_store_n(&rec->start_ticks, GUARD_RING_IDENTITY_START(identity), __ATOMIC_RELAXED);
    /* Release: whoever sees the length negative sees the owner above. */
    __atomic_store_n(&rec->length, -(int32_t)n, __ATOMIC_RELEASE);
    hook(p, GUARD_RING_PHASE_BEGUN);
    unsigned char* to = (unsigned char*)(rec + 1);
    for (int i = 0; i < count; ++i) {
      if (parts[i].length == 0) continue;
      memcpy(to, parts[i].data, parts[i].length);
      to += parts[i].length;
    }
    rc = 0;
    if (fill != NULL) {
      /* The fill writes into the claim: the consumer waits for this record
       * meanwhile (and so do the records behind it), as for any put. */
      long got = fill->fn(fill->arg, to, fill->room);
      if (got < 0 || (uint64_t)got > fill->room) {
        /* Published as padding, which the consumer skips: the claim is
         * given back and nothing of it is delivered. */
        rc = got < 0 ? (int)got : -EIO;
        __atomic_store_n(&rec->type, GUARD_RING_TYPE_PADDING, __ATOMIC_RELAXED);
      } else {
        /* Relaxed: published by the release below, like the rest. */
        __atomic_store_n(&rec->payload_length, (uint32_t)(parts_len + (uint64_t)got), __ATOMIC_RELAXED);
      }
    }
    hook(p, GUARD_RING_PHASE_FILLED);
    /* Release: the payload before the positive length (the publication). */
    __atomic_store_n(&rec->length, (int32_t)n, __ATOMIC_RELEASE);
    --held_depth;
    end = pos + n;
    break;
  }

  /* Release: our slot writes come before its next owner's. */
  __atomic_store_n(&mine->identity, 0, __ATOMIC_RELEASE);
  if (rc == 0) wake_consumer(h, cap, 0);
  /* After the wake: the consumer's reading goes first. */
  if (end != 0) give_back(p, end);
  return rc;
}

int guard_ring_putv(struct guard_ring_producer* p, uint32_t type,
                    const struct guard_ring_part* parts, int count) {
  int saved = errno;
  int rc = put(p, (uint32_t)getpid(), type, parts, count, NULL);
  errno = saved;
  return rc;
}

int guard_ring_putv_as(struct guard_ring_producer* p, int pid, uint32_t type,
                       const struct guard_ring_part* parts, int count) {
  int saved = errno;
  int rc = put(p, (uint32_t)pid, type, parts, count, NULL);
  errno = saved;
  return rc;
}

int guard_ring_putv_fill_as(struct guard_ring_producer* p, int pid, uint32_t type,
                            const struct guard_ring_part* parts, int count, const struct guard_ring_fill* fill) {
  int saved = errno;
  int rc = put(p, (uint32_t)pid, type, parts, count, fill);
  errno = saved;
  return rc;
}

int guard_ring_put(struct guard_ring_producer* p, uint32_t type, const void* payload, uint32_t len) {
  struct guard_ring_part part = {payload, len};
  return guard_ring_putv(p, type, &part, 1);
}
