#include "interpose/linux/name_lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>

#include "common/ring_format.h"
#include "common/ring_lineage.h"
#include "common/ring_producer.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/syscall_stub.h"

/* The words, or NULL before the ring is mapped (shim_config.ready orders
 * it: set before, read after). */
static uint32_t* words(void) {
  if (!shim_config.ready || shim_config.ring.header == NULL) return NULL;
  return shim_config.ring.header->name_locks;
}

int shim_name_locks_usable(int32_t pid) {
  return words() != NULL && guard_ring_producer_usable(&shim_config.ring, pid) == 0;
}

void shim_name_locks_new_image(int32_t tid) {
  uint32_t* w = words();
  if (w == NULL || tid <= 0) return;
  for (uint32_t i = 0; i < GUARD_RING_NAME_LOCKS; ++i) {
    if ((__atomic_load_n(&w[i], __ATOMIC_RELAXED) & GUARD_RING_LOCK_TID_MASK) == (uint32_t)tid) {
      shim_name_lock_give_word(&w[i], tid);
    }
  }
}

uint32_t shim_name_lock_index(const char* abs, size_t len) { return guard_ring_name_lock_index(abs, len); }

uint32_t shim_name_lock_seen(uint32_t index) {
  uint32_t* w = words();
  if (w == NULL) return UINT32_MAX;
  /* Acquire: what the last owner did before its release is visible to the
   * look that follows. */
  return __atomic_load_n(&w[index], __ATOMIC_ACQUIRE);
}

static int64_t now_ns(void) {
  struct timespec ts;
  shim_own_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Whether thread `tid` is gone (its lock is then nobody's). tkill with no
 * signal checks existence only; a reused tid reads as alive, and the wait's
 * bound covers that. */
static int owner_gone(uint32_t tid) {
  return shim_own_syscall(SYS_tkill, (long)tid, 0, 0, 0, 0, 0) == -ESRCH;
}

/* The pid of the ring's consumer, the session's supervisor, whose
 * descendants are the session (common/ring_lineage.h); 0 when none is
 * attached. Relaxed: the consumer writes it once at its start. */
static int32_t session_root(void) {
  if (!shim_config.ready || shim_config.ring.header == NULL) return 0;
  uint64_t c = __atomic_load_n(&shim_config.ring.header->consumer, __ATOMIC_RELAXED);
  return (int32_t)GUARD_RING_IDENTITY_PID(c);
}

/* Whether a live owner `tid` is of the session whose supervisor is `root`
 * (0: unknown, so it counts). A thread that ended during the walk counts
 * too: the next look at it finds it gone. */
static int owner_of_session(uint32_t tid, int32_t root) {
  if (root <= 0) return 1;
  return guard_ring_descends_from((int)tid, root) != 0;
}

int shim_name_lock_take(uint32_t index, uint32_t seen, int32_t tid) {
  uint32_t* w = words();
  if (w == NULL) return -1;
  return shim_name_lock_take_word_in(&w[index], seen, tid, SHIM_NAME_LOCK_WAIT_NS, session_root());
}

int shim_name_lock_take_word(uint32_t* word, uint32_t seen, int32_t tid, int64_t wait_ns) {
  return shim_name_lock_take_word_in(word, seen, tid, wait_ns, 0);
}

int shim_name_lock_take_word_in(uint32_t* word, uint32_t seen, int32_t tid, int64_t wait_ns, int32_t root) {
  if (tid <= 0 || ((uint32_t)tid & ~GUARD_RING_LOCK_TID_MASK) != 0) return -1;
  int64_t deadline = 0;
  int changed = (seen & GUARD_RING_LOCK_TID_MASK) != 0;
  /* The last owner found of the session: its lineage is read once per
   * wait, not at every look (a few /proc reads, only on contention). */
  uint32_t checked = 0;
  uint32_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    uint32_t owner = cur & GUARD_RING_LOCK_TID_MASK;
    if (owner == (uint32_t)tid) return -1; /* a signal handler inside this thread's own call */
    int honoured = owner != 0 && !owner_gone(owner);
    if (honoured && owner != checked) {
      /* A thread not of the session (a forged word: tid 1, another
       * session's thread) holds nothing here. */
      honoured = owner_of_session(owner, root);
      if (honoured) checked = owner;
    }
    if (!honoured) {
      /* Free (or its owner died, or is not of the session): take it,
       * keeping the generation and the waiters. Acquire: the previous
       * owner's changes come before our look. */
      uint32_t gen = cur & GUARD_RING_LOCK_GEN_MASK;
      if (owner != 0) gen = (gen + GUARD_RING_LOCK_GEN_ONE) & GUARD_RING_LOCK_GEN_MASK; /* a dead owner's: a change */
      uint32_t want = (cur & GUARD_RING_LOCK_WAITERS) | gen | (uint32_t)tid;
      if (__atomic_compare_exchange_n(word, &cur, want, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        if (owner != 0 || gen != (seen & GUARD_RING_LOCK_GEN_MASK)) changed = 1;
        return changed ? 0 : 1;
      }
      continue; /* cur reloaded by the failed CAS */
    }
    changed = 1;
    int64_t now = now_ns();
    if (deadline == 0) deadline = now + wait_ns;
    if (now >= deadline) return -1;
    if (!(cur & GUARD_RING_LOCK_WAITERS)) {
      if (!__atomic_compare_exchange_n(word, &cur, cur | GUARD_RING_LOCK_WAITERS, 0, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED)) {
        continue;
      }
      cur |= GUARD_RING_LOCK_WAITERS;
    }
    /* Sleeps while the word is still `cur`; at most a millisecond, to look
     * at the owner again (it may die without a release). */
    struct timespec ts = {0, 1000 * 1000};
    shim_own_syscall(SYS_futex, (long)word, FUTEX_WAIT, (long)cur, (long)&ts, 0, 0);
    cur = __atomic_load_n(word, __ATOMIC_RELAXED);
  }
}

void shim_name_lock_give(uint32_t index, int32_t tid) {
  uint32_t* w = words();
  if (w != NULL) shim_name_lock_give_word(&w[index], tid);
}

void shim_name_lock_give_word(uint32_t* word, int32_t tid) {
  uint32_t cur = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    /* Taken over meanwhile (this thread was thought dead, or waited past a
     * bound): not ours to give. */
    if ((cur & GUARD_RING_LOCK_TID_MASK) != (uint32_t)tid) return;
    uint32_t gen = (cur + GUARD_RING_LOCK_GEN_ONE) & GUARD_RING_LOCK_GEN_MASK;
    /* Release: our look, pre-image, call and OUTCOME come before the next
     * owner's look. */
    if (__atomic_compare_exchange_n(word, &cur, gen, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) break;
  }
  if (cur & GUARD_RING_LOCK_WAITERS) shim_own_syscall(SYS_futex, (long)word, FUTEX_WAKE, 0x7fffffff, 0, 0, 0);
}
