/* What every interposed entry point does, in order:
 *   1. shim_begin: keep errno, take the reentrancy guard (reentry.h); a call
 *      made while the guard is held goes straight to the real function, or
 *      fails by the capture-failure policy where nothing would record it
 *      (reentered.h);
 *   2. shim_before_<kind> (shim_capture.h): classify; shim_capture_<kind>
 *      (capture.h): capture, and choose the call's route;
 *   3. shim_proceed: give errno back, drop the guard;
 *   4. the host's call (SHIM_HOST), by its route: from the stub when the
 *      shim captured it (the tracer does not stop it), through the real
 *      function otherwise (the fallback: the filter stops it and the tracer
 *      captures it), or not at all when the capture-failure policy blocks it;
 *   5. shim_finish: shim_after and the OUTCOME record under the guard, errno
 *      as the call left it.
 * So errno after the entry point is the call's own: unchanged by a call that
 * succeeds, the call's error when it fails. */
#ifndef GUARD_INTERPOSE_LINUX_INTERPOSER_H_
#define GUARD_INTERPOSE_LINUX_INTERPOSER_H_

#include <errno.h>
#include <sys/syscall.h>

#include "interpose/linux/capture.h"
#include "interpose/linux/capture_alone.h"
#include "interpose/linux/real_functions.h"
#include "interpose/linux/reentered.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/reentry.h"
#include "interpose/shim_capture.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/* Sets up the shim's state on the first call if the constructor has not run. */
void shim_init_once(void);

static inline int shim_begin(struct shim_call* c, const char* entry) {
  int saved = errno;
  if (!shim_enter()) return 0;
  c->entry = entry;
  c->cls = SHIM_NOTHING;
  c->saved_errno = saved;
  c->fd = -1;
  c->mark_result = 0;
  c->claimed = 0;
  c->route = SHIM_ROUTE_REAL;
  c->fail_errno = 0;
  c->spill_errno = 0;
  c->writes_unseen = 0;
  c->recorded = 0;
  c->action = 0;
  c->call_id = 0;
  c->pid = 0;
  c->tid = 0;
  c->parent1 = -1;
  c->parent2 = -1;
  c->parent1_owned = 0;
  c->parent2_owned = 0;
  c->base1 = NULL;
  c->base2 = NULL;
  c->after_fd = -1;
  c->nlocks = 0;
  c->kill_number = 0;
  shim_init_once();
  return 1;
}

static inline void shim_proceed(struct shim_call* c) {
  shim_alone_settle(c);
  if (!c->recorded) shim_unlock_names(c); /* nothing of it to order against others */
  errno = c->saved_errno;
  shim_leave();
}

static inline long shim_finish(struct shim_call* c, long rc) {
  int err = errno;
  if (shim_enter()) {
    shim_after(c, rc, err);
    shim_capture_after(c, rc, err);
    shim_unlock_names(c);
    if (c->route == SHIM_ROUTE_FAIL && rc >= 0) {
      /* An open beyond the marks' table whose capture failed under "block":
       * the host never sees the fd. */
      shim_own_syscall(SYS_close, rc, 0, 0, 0, 0, 0);
      rc = -1;
      err = c->fail_errno;
    }
    shim_leave();
  }
  errno = err;
  return rc;
}

#define SHIM_LONGS6(...) ((long[6]){__VA_ARGS__})
static inline long shim_raw6(long nr, const long* a) {
  return shim_errno_result(shim_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}
static inline long shim_stub6(long nr, const long* a) {
  return shim_errno_result(shim_stub_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

/* The real function `name` called with `call_args`, or the raw syscall `nr`
 * with the longs that follow when the real one cannot be had. */
#define SHIM_REAL_OR_RAW(name, call_args, nr, ...)                       \
  ({                                                                    \
    __typeof__(&name) real_ = SHIM_REAL(name);                          \
    real_ ? (long)real_ call_args : shim_raw6(nr, SHIM_LONGS6(__VA_ARGS__)); \
  })

/* A call made inside the shim's own work (shim_begin gave 0): `check`
 * (reentered.h) gives the errno it fails with, `failed` returned; 0 lets
 * it go on to the real function. */
#define SHIM_REENTERED(check, failed) \
  do {                                \
    int err_ = (check);               \
    if (err_ != 0) {                  \
      errno = err_;                   \
      return failed;                  \
    }                                 \
  } while (0)

/* A call the capture-failure policy blocks: -1 with its errno. */
static inline long shim_blocked(const struct shim_call* c) {
  errno = c->fail_errno;
  return -1;
}

/* The host's call by its route (enum shim_route): from the stub when the
 * shim captured it and the stub is mapped, else the real function. */
#define SHIM_HOST(c, name, call_args, nr, ...)                                     \
  ((c)->route == SHIM_ROUTE_FAIL ? shim_blocked(c)                                 \
   : (c)->route == SHIM_ROUTE_STUB && shim_stub_ready()                            \
       ? shim_stub6(nr, SHIM_LONGS6(__VA_ARGS__))                                  \
       : SHIM_REAL_OR_RAW(name, call_args, nr, __VA_ARGS__))

#endif /* GUARD_INTERPOSE_LINUX_INTERPOSER_H_ */
