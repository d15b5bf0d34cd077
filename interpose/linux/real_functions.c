#include "interpose/linux/real_functions.h"

#include <dlfcn.h>
#include <stddef.h>

#include "interpose/reentry.h"

static __thread int resolving __attribute__((tls_model("initial-exec")));

void* shim_real_lookup(_Atomic(void*)* slot, const char* name) {
  void* fn = atomic_load_explicit(slot, memory_order_relaxed);
  if (fn != NULL) return fn;
  /* No lookup under the reentrancy guard (a signal handler that interrupted
   * the shim's own work): dlsym is not async-signal-safe. The raw call the
   * caller falls back to is what the real function would have made. */
  if (resolving || shim_depth != 0) return NULL;
  resolving = 1;
  fn = dlsym(RTLD_NEXT, name);
  resolving = 0;
  if (fn != NULL) atomic_store_explicit(slot, fn, memory_order_relaxed);
  return fn;
}
