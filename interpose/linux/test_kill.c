#include "interpose/linux/test_kill.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "common/ring_producer.h"
#include "common/shim_interface.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/env_find.h"

static enum shim_kill_phase kill_phase;
static unsigned kill_at;
/* Relaxed: the number is all that matters, and each captured call takes
 * one (the threads of a process share the count). */
static _Atomic unsigned captured;

static long slow_put_ms;

void shim_test_kill_configure(char* const* envp) {
  const char* slow = shim_env_find(envp, GUARD_ENV_SHIM_TEST_SLOW_PUT);
  for (const char* d = slow; d != NULL && *d >= '0' && *d <= '9' && slow_put_ms < 100000; ++d) {
    slow_put_ms = slow_put_ms * 10 + (*d - '0');
  }
  const char* v = shim_env_find(envp, GUARD_ENV_SHIM_TEST_KILL);
  if (v == NULL) return;
  static const struct {
    const char* name;
    enum shim_kill_phase phase;
  } phases[] = {{"pre-image:", SHIM_KILL_PRE_IMAGE}, {"call:", SHIM_KILL_CALL}, {"outcome:", SHIM_KILL_OUTCOME}};
  for (size_t i = 0; i < sizeof phases / sizeof phases[0]; ++i) {
    size_t n = strlen(phases[i].name);
    if (strncmp(v, phases[i].name, n) != 0) continue;
    unsigned at = 0;
    for (const char* d = v + n; *d >= '0' && *d <= '9' && at < 1000000; ++d) at = at * 10 + (unsigned)(*d - '0');
    if (at == 0) return;
    kill_at = at;
    kill_phase = phases[i].phase;
    return;
  }
}

void shim_test_kill_restart(void) { atomic_store_explicit(&captured, 0, memory_order_relaxed); }

void shim_test_kill_point(struct shim_call* c, enum shim_kill_phase phase) {
  if (kill_phase == SHIM_KILL_NONE) return;
  if (phase == SHIM_KILL_PRE_IMAGE) c->kill_number = atomic_fetch_add_explicit(&captured, 1, memory_order_relaxed) + 1;
  if (phase != kill_phase || c->kill_number != kill_at) return;
  long pid = shim_own_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
  shim_own_syscall(SYS_kill, pid, SIGKILL, 0, 0, 0, 0);
}

static void slow_put(void* arg, enum guard_ring_phase phase) {
  (void)arg;
  if (phase != GUARD_RING_PHASE_CLAIMED) return;
  struct timespec ts = {slow_put_ms / 1000, (slow_put_ms % 1000) * 1000000L};
  shim_own_syscall(SYS_nanosleep, (long)&ts, 0, 0, 0, 0, 0);
}

void shim_test_slow_put_install(struct guard_ring_producer* p) {
  if (slow_put_ms <= 0) return;
  p->test_hook = slow_put;
  p->test_hook_arg = NULL;
}
