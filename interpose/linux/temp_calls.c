/* The mkstemp family: mkstemp, mkostemp, mkstemps, mkostemps and their 64
 * names (the same calls on x86_64), and mkdtemp. glibc's make their names
 * and create them through its internal __open and __mkdir, which no preload
 * reaches; the shim makes the names itself as glibc does (temp_name.h) and
 * creates each through its capturing open (open_call.h): O_RDWR|O_CREAT|
 * O_EXCL with the mkostemp flags, mode 0600, a creation, so a record alone;
 * mkdtemp's through a captured mkdir, mode 0700. errno is the host's after
 * a success, the failing attempt's otherwise. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "common/shim_record.h"
#include "interpose/linux/interposer.h"
#include "interpose/linux/open_call.h"
#include "interpose/shim_capture.h"
#include "interpose/temp_name.h"

#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 0x0001
#endif

/* Random bits for the names: getrandom without blocking (a kernel whose
 * pool is not ready yet refuses), else the clock mixed with the thread and
 * a stack address, as glibc falls back to the clock. */
static uint64_t seed(void) {
  uint64_t v = 0;
  if (shim_own_syscall(SYS_getrandom, (long)&v, sizeof v, GRND_NONBLOCK, 0, 0, 0) == (long)sizeof v) return v;
  struct timespec ts = {0, 0};
  (void)clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t tid = (uint64_t)shim_own_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
  return ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30)) ^ (tid << 40) ^ (uint64_t)(uintptr_t)&v;
}

SHIM_REAL_SLOT(mkdir);

/* One attempt of mkdtemp: a mkdir classified and captured as the
 * interposed mkdir's (a record alone), made from the stub. */
static int temp_dir_attempt(const char* path) {
  struct shim_call c;
  if (!shim_begin(&c, "mkdtemp")) {
    SHIM_REENTERED(shim_reentered_traced("mkdtemp"), -1);
    return (int)SHIM_REAL_OR_RAW(mkdir, (path, 0700), SYS_mkdir, (long)path, 0700);
  }
  shim_before_temp(&c, path, 1);
  shim_capture_create(&c, GUARD_SHIM_MKDIR, AT_FDCWD, path, 0700, NULL);
  shim_proceed(&c);
  return (int)shim_finish(&c, SHIM_HOST(&c, mkdir, (path, 0700), SYS_mkdir, (long)path, 0700));
}

/* `dir`: mkdtemp's directory, else a file opened with `flags`. */
static int temp_make(const char* entry, char* templ, int suffixlen, int flags, int dir) {
  char* xs = shim_temp_xs(templ, suffixlen);
  if (xs == NULL) {
    errno = EINVAL;
    return -1;
  }
  int saved = errno;
  uint64_t state = seed();
  for (unsigned n = 0; n < SHIM_TEMP_ATTEMPTS; ++n) {
    shim_temp_fill(xs, &state);
    int fd = dir ? temp_dir_attempt(templ)
                 : shim_open_call(entry, AT_FDCWD, templ, (flags & ~O_ACCMODE) | O_RDWR | O_CREAT | O_EXCL,
                                  S_IRUSR | S_IWUSR, 0);
    if (fd >= 0) {
      errno = saved;
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

static int temp_file(const char* entry, char* templ, int suffixlen, int flags) {
  return temp_make(entry, templ, suffixlen, flags, 0);
}

SHIM_EXPORT char* mkdtemp(char* templ) { return temp_make("mkdtemp", templ, 0, 0, 1) == 0 ? templ : NULL; }

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
