/* The shim's start: its state set up once (from the constructor, or from
 * the first interposed call if another library's constructor calls in
 * before the shim's own runs), the stub mapped, fork's child made the owner
 * of its marks. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "interpose/env_restore.h"
#include "interpose/fd_marks.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/name_lock.h"
#include "interpose/linux/capture_record.h"
#include "interpose/linux/fork_calls.h"
#include "interpose/linux/interposer.h"
#include "interpose/linux/process_name.h"
#include "interpose/linux/test_kill.h"
#include "interpose/shim_process.h"
#include "interpose/test_report.h"

extern char** environ;

void shim_resolve_exec_family(void); /* exec_calls.c */

/* 0: not started, 1: under way, 2: done. A caller that finds it under way
 * (another thread, or a signal handler on this one) goes on without: the
 * test report and the saved environment may be missing for that call,
 * nothing else. */
static _Atomic int init_state;

void shim_init_once(void) {
  /* acquire pairs with the release below: the common case is this load. */
  if (atomic_load_explicit(&init_state, memory_order_acquire) == 2) return;
  int expected = 0;
  /* acq_rel: the state written below is visible to whoever reads 2. */
  if (!atomic_compare_exchange_strong_explicit(&init_state, &expected, 1, memory_order_acq_rel,
                                               memory_order_acquire)) {
    return;
  }
  /* The first call may come before the constructor (another library's
   * constructor calls fopen: sed's libselinux does, and preloaded objects
   * are initialised after the host's libraries): the stub first here too,
   * or the ring's mapping below would be a call the tracer stops. */
  (void)shim_stub_map();
  shim_process_adopt();
  shim_test_report_configure(environ);
  shim_test_kill_configure(environ);
  shim_process_name_load();
  Dl_info info;
  const char* self = NULL;
  if (dladdr((void*)&shim_init_once, &info) != 0) self = info.dli_fname;
  shim_env_snapshot(environ, self);
  shim_config_load(environ);
  if (shim_config.ready) {
    shim_test_slow_put_install(&shim_config.ring);
    /* A lock a call of the image this exec replaced held is nobody's now. */
    int32_t pid = (int32_t)shim_process_pid();
    if (shim_name_locks_usable(pid)) shim_name_locks_new_image(pid);
  }
  atomic_store_explicit(&init_state, 2, memory_order_release);
}

static void adopt_in_child(void) {
  shim_process_adopt();
  shim_fd_marks_forked();
  shim_call_ids_forget();
  shim_test_kill_restart();
}

__attribute__((constructor)) static void shim_start(void) {
  /* Where the page cannot be had, the shim's calls go through the real
   * functions and the tracer stops them: slower, never unseen. Mapped
   * first, so that the ring's mapping at the start goes from it. */
  (void)shim_stub_map();
  shim_init_once();
  /* A vfork child should not be the first to look them up: dlsym takes
   * the loader's lock and may allocate, in memory its parent shares. */
  shim_resolve_exec_family();
  shim_resolve_fork_family();
  /* Registered here, not in shim_init_once: pthread_atfork may allocate. */
  pthread_atfork(NULL, NULL, adopt_in_child);
}
