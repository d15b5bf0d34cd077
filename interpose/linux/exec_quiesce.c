#include "interpose/linux/exec_quiesce.h"

#include <sys/syscall.h>
#include <time.h>

#include "interpose/linux/syscall_stub.h"
#include "interpose/shim_process.h"

/* Process-wide. Sequentially consistent on both sides: a put increments
 * then reads exec_pending, an exec sets exec_pending then reads the count,
 * so one of the two always sees the other (Dekker). */
static int puts_in_flight;
static int exec_pending;
/* This thread is the one in the exec: a signal handler's put on it must
 * not wait for the exec it interrupted. */
static __thread int this_thread_execs;

static void nap_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  shim_own_syscall(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

void shim_put_begin(void) {
  for (;;) {
    __atomic_add_fetch(&puts_in_flight, 1, __ATOMIC_SEQ_CST);
    if (this_thread_execs || !__atomic_load_n(&exec_pending, __ATOMIC_SEQ_CST)) return;
    __atomic_sub_fetch(&puts_in_flight, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&exec_pending, __ATOMIC_ACQUIRE)) nap_ms(1);
  }
}

void shim_put_end(void) { __atomic_sub_fetch(&puts_in_flight, 1, __ATOMIC_RELEASE); }

void shim_exec_begin(void) {
  if (shim_process_is_borrowed()) return;
  this_thread_execs = 1;
  __atomic_store_n(&exec_pending, 1, __ATOMIC_SEQ_CST);
  for (int waited = 0; waited < 2000 && __atomic_load_n(&puts_in_flight, __ATOMIC_SEQ_CST) > 0; ++waited) nap_ms(1);
}

void shim_exec_end(void) {
  if (!this_thread_execs) return;
  this_thread_execs = 0;
  __atomic_store_n(&exec_pending, 0, __ATOMIC_RELEASE);
}
