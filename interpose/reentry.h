/* The per-thread reentrancy guard.
 *
 * The guard is held only while the shim does its own work for a call
 * (classifying it, capturing, reporting), never while the host's call
 * itself runs. So a signal handler that interrupts a host's blocking call
 * is handled like any other code, while a call made while the shim's own
 * work is under way on the same thread (a signal handler interrupting it, a
 * library the shim's work calls into) is not handled by the shim at all: it
 * goes straight to the real function, whose system call the tracer sees
 * (the net under the shim), so it is still captured in --mode auto.
 *
 * initial-exec TLS: no __tls_get_addr call (which may allocate) on any
 * path. A shim loaded late by dlopen takes its few bytes from the static
 * TLS surplus glibc keeps for that. */
#ifndef GUARD_INTERPOSE_REENTRY_H_
#define GUARD_INTERPOSE_REENTRY_H_

extern __thread int shim_depth __attribute__((tls_model("initial-exec")));

/* Takes the guard; 0 if this thread already holds it. A signal arriving
 * between the test and the store runs its own enter/leave pair and leaves
 * the depth at 0 again, so the pair needs no atomic read-modify-write,
 * only a compiler barrier against reordering with the work it guards. */
static inline int shim_enter(void) {
  if (shim_depth != 0) return 0;
  shim_depth = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return 1;
}

static inline void shim_leave(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  shim_depth = 0;
}

#endif /* GUARD_INTERPOSE_REENTRY_H_ */
