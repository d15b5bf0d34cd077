/* The shim's locks on names (docs/ring.md, "Name locks"): a call that
 * records a change to a name holds the lock of that name's bucket from its
 * look at the name (lstat, pre-image) until its OUTCOME is in the ring, so
 * that two processes' calls on one name run in the order of their records
 * and each one's pre-image is what the other left. Without them, a call
 * could record what a name held, let another process's call change it, and
 * then run on that: an unlink saving one file and removing another.
 *
 * The words live in the ring's header, shared by every process of the
 * session. A lock whose owner died, or whose owner is not a thread of the
 * session (its parent chain does not reach the ring's consumer: a forged
 * word), is taken over; a wait for a live owner of the session is bounded
 * (SHIM_NAME_LOCK_WAIT_NS), after which the call goes on unlocked, as
 * before locks: a stopped owner (Ctrl-Z, a debugger) can slow others, never
 * stop them. Async-signal-safe, no heap: raw futex and tkill calls. */
#ifndef GUARD_INTERPOSE_LINUX_NAME_LOCK_H_
#define GUARD_INTERPOSE_LINUX_NAME_LOCK_H_

#include <stddef.h>
#include <stdint.h>

/* How long a call waits for a lock before it goes on without it. */
#define SHIM_NAME_LOCK_WAIT_NS (2LL * 1000 * 1000 * 1000)

/* Whether process `pid` (just asked of the kernel) may take locks: the ring
 * is mapped and takes its records (the consumer's pid namespace, where
 * thread ids name the same threads for every process of the session). */
int shim_name_locks_usable(int32_t pid);

/* A new program image (an exec, even from a thread other than the main
 * one, which then takes the main thread's id): no call of its is under
 * way, so a lock that names `tid` (getpid) is a dead image's, left behind
 * (its call was cut off by the exec). Released. */
void shim_name_locks_new_image(int32_t tid);

/* The bucket of an absolute name. */
uint32_t shim_name_lock_index(const char* abs, size_t len);

/* The bucket's word now (acquire): taken just before the look at the name,
 * to tell later whether anyone changed it meanwhile. UINT32_MAX when there
 * are no locks (no ring). */
uint32_t shim_name_lock_seen(uint32_t index);

/* Takes the lock of `index` for thread `tid`. 1: taken, and nobody held or
 * released it since `seen` (the look made then still holds); 0: taken, but
 * the name may have changed since (look again); -1: not taken (no ring,
 * this thread already holds it: a signal handler inside a call of its own;
 * or the wait timed out). */
int shim_name_lock_take(uint32_t index, uint32_t seen, int32_t tid);

/* Releases a lock taken by `tid`, waking its waiters. */
void shim_name_lock_give(uint32_t index, int32_t tid);

/* The same on one lock word, waiting at most `wait_ns` (the tests'), an
 * owner honoured while its thread lives. */
int shim_name_lock_take_word(uint32_t* word, uint32_t seen, int32_t tid, int64_t wait_ns);
/* The same, an owner honoured only while its thread lives and descends from
 * `root` (the session's supervisor; 0: anyone). Its lineage is read only
 * when the word is held by a live thread (contention), once per owner and
 * wait. */
int shim_name_lock_take_word_in(uint32_t* word, uint32_t seen, int32_t tid, int64_t wait_ns, int32_t root);
void shim_name_lock_give_word(uint32_t* word, int32_t tid);

#endif /* GUARD_INTERPOSE_LINUX_NAME_LOCK_H_ */
