/* The open family: open, openat, creat (and their 64-bit names, which are
 * the same calls on x86_64), the fortified __open*_2 forms that
 * _FORTIFY_SOURCE builds call, and glibc's public __open and __open64. fopen and freopen are stdio_calls.c's, the
 * mkstemp family temp_calls.c's: both open through shim_open_call
 * (open_call.h). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "interpose/linux/capture_path.h"
#include "interpose/linux/interposer.h"
#include "interpose/linux/open_call.h"
#include "interpose/test_report.h"

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);
int __open(const char* path, int flags, ...);
int __open64(const char* path, int flags, ...);

SHIM_REAL_SLOT(openat);

/* Whether the flags carry a mode argument (glibc's __OPEN_NEEDS_MODE). */
static int needs_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

/* Every open and creat lands here: one openat, from the stub once the
 * shim captured it (or through the real function: the tracer's). */
int shim_open_call(const char* entry, int dirfd, const char* path, int flags, mode_t mode, int writes_unseen) {
  /* The hot path: a read-only open without O_CREAT or O_TRUNC changes
   * nothing (class "nothing": no capture, no mark, and the filter lets it
   * go), so it goes straight to the real function, without the guard and
   * errno keeping a captured call needs (tools/bench/shim_micro.sh). */
  if ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC))) {
    shim_test_report(entry, shim_class_name(SHIM_NOTHING), path, -1);
    return (int)SHIM_REAL_OR_RAW(openat, (dirfd, path, flags, mode), SYS_openat, dirfd, (long)path, flags, mode);
  }
  /* What may change a file is classified, captured and opened by one copy
   * of its path (capture_path.h). */
  SHIM_PATH_COPY(path);
  struct shim_call c;
  if (!shim_begin(&c, entry)) {
    SHIM_REENTERED(shim_reentered_open(entry, dirfd, path, flags), -1);
    return (int)SHIM_REAL_OR_RAW(openat, (dirfd, path, flags, mode), SYS_openat, dirfd, (long)path, flags, mode);
  }
  c.writes_unseen = writes_unseen;
  shim_before_open(&c, dirfd, path, flags, mode);
  shim_capture_open(&c, dirfd, path, flags, mode);
  shim_proceed(&c);
  long rc = SHIM_HOST(&c, openat, (dirfd, path, flags, mode), SYS_openat, dirfd, (long)path, flags, mode);
  return (int)shim_finish(&c, rc);
}

static int open_call(const char* entry, int dirfd, const char* path, int flags, mode_t mode) {
  return shim_open_call(entry, dirfd, path, flags, mode, 0);
}

#define SHIM_MODE_ARG(flags)          \
  mode_t mode = 0;                    \
  if (needs_mode(flags)) {            \
    va_list ap;                       \
    va_start(ap, flags);              \
    mode = (mode_t)va_arg(ap, int);   \
    va_end(ap);                       \
  }

SHIM_EXPORT int open(const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("open", AT_FDCWD, path, flags, mode);
}

SHIM_EXPORT int open64(const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("open64", AT_FDCWD, path, flags, mode);
}

SHIM_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("openat", dirfd, path, flags, mode);
}

SHIM_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("openat64", dirfd, path, flags, mode);
}

/* glibc exports these under public versions (GLIBC_2.2.5) beside open and
 * open64: a program that calls them by name would pass the shim by. */
SHIM_EXPORT int __open(const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("__open", AT_FDCWD, path, flags, mode);
}

SHIM_EXPORT int __open64(const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_call("__open64", AT_FDCWD, path, flags, mode);
}

/* The fortified forms take no mode: one that needs it is a bug glibc aborts
 * on, so it goes to glibc's own. */
SHIM_REAL_SLOT(__open_2);
SHIM_REAL_SLOT(__openat_2);

SHIM_EXPORT int __open_2(const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__open_2) != NULL) return SHIM_REAL(__open_2)(path, flags);
  return open_call("__open_2", AT_FDCWD, path, flags, 0);
}

SHIM_EXPORT int __open64_2(const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__open_2) != NULL) return SHIM_REAL(__open_2)(path, flags);
  return open_call("__open64_2", AT_FDCWD, path, flags, 0);
}

SHIM_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__openat_2) != NULL) return SHIM_REAL(__openat_2)(dirfd, path, flags);
  return open_call("__openat_2", dirfd, path, flags, 0);
}

SHIM_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__openat_2) != NULL) return SHIM_REAL(__openat_2)(dirfd, path, flags);
  return open_call("__openat64_2", dirfd, path, flags, 0);
}

SHIM_EXPORT int creat(const char* path, mode_t mode) {
  return open_call("creat", AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

SHIM_EXPORT int creat64(const char* path, mode_t mode) {
  return open_call("creat64", AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}
