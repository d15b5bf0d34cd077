/* The functions the shim stands in front of, found lazily with
 * dlsym(RTLD_NEXT): at the first call, which may come before the shim's
 * constructor (another library's constructor) or from inside dlsym itself
 * (dlsym may allocate, and an allocator may open files). A lookup already
 * under way on the same thread gives NULL, and so does one not yet made
 * while the reentrancy guard is held: the caller then makes the call raw
 * (shim_raw_syscall), where the tracer sees it. */
#ifndef GUARD_INTERPOSE_LINUX_REAL_FUNCTIONS_H_
#define GUARD_INTERPOSE_LINUX_REAL_FUNCTIONS_H_

#include <stdatomic.h>
#include <stddef.h>

/* `*slot` caches the address (relaxed is enough: any thread that misses
 * the cache looks it up again and finds the same one). The cached case is
 * inline: it is on every call the shim lets through. */
void* shim_real_lookup(_Atomic(void*)* slot, const char* name);
static inline void* shim_real(_Atomic(void*)* slot, const char* name) {
  void* fn = atomic_load_explicit(slot, memory_order_relaxed);
  return fn != NULL ? fn : shim_real_lookup(slot, name);
}

/* One cache per function, static in the file that interposes it. */
#define SHIM_REAL_SLOT(name) static _Atomic(void*) shim_real_slot_##name
#define SHIM_REAL(name) ((__typeof__(&name))shim_real(&shim_real_slot_##name, #name))

#endif /* GUARD_INTERPOSE_LINUX_REAL_FUNCTIONS_H_ */
