/* The open family: open, openat, creat (and their 64-bit names, which are
 * the same calls on x86_64), the fortified __open*_2 forms that
 * _FORTIFY_SOURCE builds call, fopen and freopen, the mkstemp family. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "interpose/linux/interposer.h"

int __open_2(const char* path, int flags);
int __open64_2(const char* path, int flags);
int __openat_2(int dirfd, const char* path, int flags);
int __openat64_2(int dirfd, const char* path, int flags);

SHIM_REAL_SLOT(openat);
SHIM_REAL_SLOT(fopen);
SHIM_REAL_SLOT(freopen);
SHIM_REAL_SLOT(mkostemps);
SHIM_REAL_SLOT(mkdtemp);

/* Whether the flags carry a mode argument (glibc's __OPEN_NEEDS_MODE). */
static int needs_mode(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

/* Every open and creat lands here: one openat, from the stub once the
 * shim captured it (or through the real function: the tracer's). */
static int open_at(const char* entry, int dirfd, const char* path, int flags, mode_t mode) {
  struct shim_call c;
  if (!shim_begin(&c, entry)) {
    return (int)SHIM_REAL_OR_RAW(openat, (dirfd, path, flags, mode), SYS_openat, dirfd, (long)path, flags, mode);
  }
  shim_before_open(&c, dirfd, path, flags, mode);
  shim_capture_open(&c, dirfd, path, flags, mode);
  shim_proceed(&c);
  long rc = SHIM_HOST(&c, openat, (dirfd, path, flags, mode), SYS_openat, dirfd, (long)path, flags, mode);
  return (int)shim_finish(&c, rc);
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
  return open_at("open", AT_FDCWD, path, flags, mode);
}

SHIM_EXPORT int open64(const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_at("open64", AT_FDCWD, path, flags, mode);
}

SHIM_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_at("openat", dirfd, path, flags, mode);
}

SHIM_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  SHIM_MODE_ARG(flags);
  return open_at("openat64", dirfd, path, flags, mode);
}

/* The fortified forms take no mode: one that needs it is a bug glibc aborts
 * on, so it goes to glibc's own. */
SHIM_REAL_SLOT(__open_2);
SHIM_REAL_SLOT(__openat_2);

SHIM_EXPORT int __open_2(const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__open_2) != NULL) return SHIM_REAL(__open_2)(path, flags);
  return open_at("__open_2", AT_FDCWD, path, flags, 0);
}

SHIM_EXPORT int __open64_2(const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__open_2) != NULL) return SHIM_REAL(__open_2)(path, flags);
  return open_at("__open64_2", AT_FDCWD, path, flags, 0);
}

SHIM_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__openat_2) != NULL) return SHIM_REAL(__openat_2)(dirfd, path, flags);
  return open_at("__openat_2", dirfd, path, flags, 0);
}

SHIM_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  if (needs_mode(flags) && SHIM_REAL(__openat_2) != NULL) return SHIM_REAL(__openat_2)(dirfd, path, flags);
  return open_at("__openat64_2", dirfd, path, flags, 0);
}

SHIM_EXPORT int creat(const char* path, mode_t mode) {
  return open_at("creat", AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

SHIM_EXPORT int creat64(const char* path, mode_t mode) {
  return open_at("creat64", AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* The open flags an fopen mode string stands for (glibc's reading of it). */
static int stdio_flags(const char* mode) {
  int flags;
  switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return O_RDONLY;
  }
  for (const char* m = mode + 1; *m != '\0' && *m != ','; ++m) {
    if (*m == '+') flags = (flags & ~O_ACCMODE) | O_RDWR;
    if (*m == 'x') flags |= O_EXCL;
    if (*m == 'e') flags |= O_CLOEXEC;
  }
  return flags;
}

/* fopen and freopen open through glibc's internal __open, which no preload
 * can reach: the call is classified here and made by glibc's own function,
 * whose open the tracer stops and captures (a fallback; opening through the
 * stub and fdopen would make it the shim's). Its fd is left unmarked while
 * the capture is on: the tracer captured it. */
static FILE* stdio_open(const char* entry, const char* path, const char* mode, FILE* stream) {
  __typeof__(&fopen) real_fopen = SHIM_REAL(fopen);
  __typeof__(&freopen) real_freopen = SHIM_REAL(freopen);
  struct shim_call c;
  int guarded = shim_begin(&c, entry);
  if (guarded) {
    shim_before_open(&c, AT_FDCWD, path, stdio_flags(mode), 0666);
    shim_capture_fell_back(&c);
    shim_proceed(&c);
  }
  FILE* f = NULL;
  if (stream == NULL ? real_fopen == NULL : real_freopen == NULL) {
    errno = ENOSYS;
  } else {
    f = stream == NULL ? real_fopen(path, mode) : real_freopen(path, mode, stream);
  }
  if (guarded) shim_finish(&c, f != NULL ? fileno(f) : -1);
  return f;
}

SHIM_EXPORT FILE* fopen(const char* path, const char* mode) { return stdio_open("fopen", path, mode, NULL); }
SHIM_EXPORT FILE* fopen64(const char* path, const char* mode) { return stdio_open("fopen64", path, mode, NULL); }

SHIM_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return stdio_open("freopen", path, mode, stream);
}

SHIM_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return stdio_open("freopen64", path, mode, stream);
}

/* The mkstemp family creates with O_EXCL through glibc's internal __open:
 * a creation, a record alone. All of them are mkostemps underneath. */
static int temp_file(const char* entry, char* templ, int suffixlen, int flags) {
  __typeof__(&mkostemps) real = SHIM_REAL(mkostemps);
  struct shim_call c;
  int guarded = shim_begin(&c, entry);
  if (guarded) {
    shim_before_temp(&c, templ, 0);
    shim_capture_fell_back(&c);
    shim_proceed(&c);
  }
  int fd = -1;
  if (real == NULL) {
    errno = ENOSYS;
  } else {
    fd = real(templ, suffixlen, flags);
  }
  if (guarded) shim_finish(&c, fd);
  return fd;
}

SHIM_EXPORT int mkstemp(char* templ) { return temp_file("mkstemp", templ, 0, 0); }
SHIM_EXPORT int mkstemp64(char* templ) { return temp_file("mkstemp64", templ, 0, 0); }
SHIM_EXPORT int mkostemp(char* templ, int flags) { return temp_file("mkostemp", templ, 0, flags); }
SHIM_EXPORT int mkostemp64(char* templ, int flags) { return temp_file("mkostemp64", templ, 0, flags); }
SHIM_EXPORT int mkstemps(char* templ, int suffixlen) { return temp_file("mkstemps", templ, suffixlen, 0); }
SHIM_EXPORT int mkstemps64(char* templ, int suffixlen) { return temp_file("mkstemps64", templ, suffixlen, 0); }
SHIM_EXPORT int mkostemps(char* templ, int suffixlen, int flags) {
  return temp_file("mkostemps", templ, suffixlen, flags);
}
SHIM_EXPORT int mkostemps64(char* templ, int suffixlen, int flags) {
  return temp_file("mkostemps64", templ, suffixlen, flags);
}

SHIM_EXPORT char* mkdtemp(char* templ) {
  __typeof__(&mkdtemp) real = SHIM_REAL(mkdtemp);
  struct shim_call c;
  int guarded = shim_begin(&c, "mkdtemp");
  if (guarded) {
    shim_before_temp(&c, templ, 1);
    shim_proceed(&c);
  }
  char* dir = NULL;
  if (real == NULL) {
    errno = ENOSYS;
  } else {
    dir = real(templ);
  }
  if (guarded) shim_finish(&c, dir != NULL ? 0 : -1);
  return dir;
}
