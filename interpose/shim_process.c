#include "interpose/shim_process.h"

#include <stdatomic.h>

#include "interpose/shim_capture.h"
#include "interpose/shim_platform.h"

/* 0 until the constructor ran: before it, every process counts as its own
 * (the marks are empty then, so there is nothing to protect). Relaxed: a
 * process writes it only while single-threaded (the constructor, a fork
 * child) or from the one thread that forked. */
static _Atomic int owner_pid;

void shim_process_adopt(void) {
  atomic_store_explicit(&owner_pid, shim_platform_getpid(), memory_order_relaxed);
}

static int borrowed(int pid) {
  int owner = atomic_load_explicit(&owner_pid, memory_order_relaxed);
  return owner != 0 && owner != pid;
}

int shim_process_is_borrowed(void) { return borrowed(shim_platform_getpid()); }

int shim_call_pid(struct shim_call* c) {
  if (c->pid == 0) c->pid = shim_platform_getpid();
  return c->pid;
}

int shim_process_is_borrowed_by(struct shim_call* c) { return borrowed(shim_call_pid(c)); }
