/* What every interposed entry point does, in order:
 *   1. shim_begin: keep errno, take the reentrancy guard (reentry.h); a call
 *      made while the guard is held goes straight to the real function;
 *   2. shim_before_<kind> (shim_capture.h): classify, capture;
 *   3. shim_proceed: give errno back, drop the guard;
 *   4. the host's call: from the stub (SHIM_HOST), so that the tracer does
 *      not stop a call the shim has captured, or through the real function
 *      while no stub is mapped;
 *   5. shim_finish: shim_after under the guard, errno as the call left it.
 * So errno after the entry point is the call's own: unchanged by a call that
 * succeeds, the call's error when it fails. */
#ifndef GUARD_INTERPOSE_LINUX_INTERPOSER_H_
#define GUARD_INTERPOSE_LINUX_INTERPOSER_H_

#include <errno.h>

#include "interpose/linux/real_functions.h"
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
  shim_init_once();
  return 1;
}

static inline void shim_proceed(struct shim_call* c) {
  errno = c->saved_errno;
  shim_leave();
}

static inline long shim_finish(struct shim_call* c, long rc) {
  int err = errno;
  if (shim_enter()) {
    shim_after(c, rc, err);
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

/* The host's call once captured: from the stub when mapped. */
#define SHIM_HOST(name, call_args, nr, ...)                    \
  (shim_stub_ready() ? shim_stub6(nr, SHIM_LONGS6(__VA_ARGS__)) \
                     : SHIM_REAL_OR_RAW(name, call_args, nr, __VA_ARGS__))

#endif /* GUARD_INTERPOSE_LINUX_INTERPOSER_H_ */
