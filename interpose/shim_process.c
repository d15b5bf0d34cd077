#include "interpose/shim_process.h"

#include <stdatomic.h>

#include "interpose/shim_capture.h"
#include "interpose/shim_platform.h"

/* 0 until the constructor ran: before it, every process counts as its own
 * (the marks are empty then, so there is nothing to protect). Relaxed: a
 * process writes it only while single-threaded (the constructor, a fork
 * child) or from the one thread that forked. */
static _Atomic int owner_pid;

/* The process's pid, asked once (the constructor, a fork child's atfork
 * handler) rather than at every captured call: 0 means "ask the kernel".
 * Only a child that shares this memory could read a wrong one (a vfork
 * child, a libc clone with CLONE_VM, a fork child that ran no atfork
 * handler: _Fork, syscall(SYS_fork)); each of those entry points calls
 * shim_process_pid_uncached before it runs (fork_calls.c), and from then on
 * every process of that image asks the kernel, as before the cache. A raw
 * clone or fork from assembly that then calls libc is not followed (glibc
 * itself gave up caching the pid for the same reason). Relaxed: a hint
 * written before the child exists, or in a process of one thread. */
static _Atomic int cached_pid;
static _Atomic int pid_cache_off;

void shim_process_adopt(void) {
  int pid = shim_platform_getpid();
  atomic_store_explicit(&owner_pid, pid, memory_order_relaxed);
  if (!atomic_load_explicit(&pid_cache_off, memory_order_relaxed)) {
    atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
  }
}

void shim_process_pid_uncached(void) {
  atomic_store_explicit(&pid_cache_off, 1, memory_order_relaxed);
  atomic_store_explicit(&cached_pid, 0, memory_order_relaxed);
}

int shim_process_pid(void) {
  int pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
  return pid != 0 ? pid : shim_platform_getpid();
}

static int borrowed(int pid) {
  int owner = atomic_load_explicit(&owner_pid, memory_order_relaxed);
  return owner != 0 && owner != pid;
}

int shim_process_is_borrowed(void) { return borrowed(shim_process_pid()); }

int shim_call_pid(struct shim_call* c) {
  if (c->pid == 0) c->pid = shim_process_pid();
  return c->pid;
}

int shim_process_is_borrowed_by(struct shim_call* c) { return borrowed(shim_call_pid(c)); }
