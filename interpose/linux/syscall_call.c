/* syscall(): programs that skip libc's wrappers but not libc (Claude Code's
 * Bun runtime calls syscall(SYS_open) and syscall(SYS_pwritev2), node's
 * copyFileSync syscall(SYS_copy_file_range)). The numbers the filter stops
 * and the shim can classify from their arguments are classified, captured
 * as their wrappers are, and made from the stub when captured; the lazy-capture numbers (the write family, fallocate,
 * copy_file_range) are classified like their wrappers; every other number,
 * openat2 and bind among them, goes to libc's syscall() untouched, where
 * the tracer stops what it must. */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(syscall);

/* 1 if `nr` is one the shim classifies and makes from the stub. */
static int classify(struct shim_call* c, long nr, const long* a) {
  const char* p0 = (const char*)a[0];
  const char* p1 = (const char*)a[1];
  const char* p2 = (const char*)a[2];
  const char* p3 = (const char*)a[3];
  switch (nr) {
    case SYS_open: shim_before_open(c, AT_FDCWD, p0, (int)a[1], (mode_t)a[2]); return 1;
    case SYS_openat: shim_before_open(c, (int)a[0], p1, (int)a[2], (mode_t)a[3]); return 1;
    case SYS_creat: shim_before_open(c, AT_FDCWD, p0, O_WRONLY | O_CREAT | O_TRUNC, (mode_t)a[1]); return 1;
    case SYS_rename: shim_before_rename(c, AT_FDCWD, p0, AT_FDCWD, p1, 0); return 1;
    case SYS_renameat: shim_before_rename(c, (int)a[0], p1, (int)a[2], p3, 0); return 1;
    case SYS_renameat2: shim_before_rename(c, (int)a[0], p1, (int)a[2], p3, (unsigned)a[4]); return 1;
    case SYS_unlink: shim_before_delete(c, AT_FDCWD, p0, 0); return 1;
    case SYS_unlinkat: shim_before_delete(c, (int)a[0], p1, (int)a[2]); return 1;
    case SYS_rmdir: shim_before_delete(c, AT_FDCWD, p0, AT_REMOVEDIR); return 1;
    case SYS_mkdir: shim_before_mkdir(c, AT_FDCWD, p0, (mode_t)a[1]); return 1;
    case SYS_mkdirat: shim_before_mkdir(c, (int)a[0], p1, (mode_t)a[2]); return 1;
    case SYS_mknod: shim_before_mknod(c, AT_FDCWD, p0, (mode_t)a[1]); return 1;
    case SYS_mknodat: shim_before_mknod(c, (int)a[0], p1, (mode_t)a[2]); return 1;
    case SYS_symlink: shim_before_symlink(c, p0, AT_FDCWD, p1); return 1;
    case SYS_symlinkat: shim_before_symlink(c, p0, (int)a[1], p2); return 1;
    case SYS_link: shim_before_link(c, AT_FDCWD, p0, AT_FDCWD, p1); return 1;
    case SYS_linkat: shim_before_link(c, (int)a[0], p1, (int)a[2], p3); return 1;
    case SYS_truncate: shim_before_truncate(c, p0); return 1;
    case SYS_ftruncate: shim_before_fd_change(c, (int)a[0], 0); return 1;
    case SYS_chmod: case SYS_chown: case SYS_lchown:
      shim_before_metadata(c, AT_FDCWD, p0, -1, NULL); return 1;
    case SYS_fchmod: case SYS_fchown:
      shim_before_metadata(c, AT_FDCWD, NULL, (int)a[0], NULL); return 1;
    case SYS_fchmodat: case SYS_fchownat:
      shim_before_metadata(c, (int)a[0], p1, -1, NULL); return 1;
    case SYS_setxattr: case SYS_lsetxattr:
      shim_before_metadata(c, AT_FDCWD, p0, -1, p1); return 1;
    case SYS_fsetxattr:
      shim_before_metadata(c, AT_FDCWD, NULL, (int)a[0], p1); return 1;
    default: return 0;
  }
}

/* The numbers whose wrappers capture lazily: the fd they change. */
static int changed_fd(long nr, const long* a, int* known_writer) {
  *known_writer = 1;
  switch (nr) {
    case SYS_write: case SYS_pwrite64: case SYS_writev: case SYS_pwritev: case SYS_pwritev2:
      return (int)a[0];
    case SYS_sendfile: return (int)a[0];
    case SYS_copy_file_range: return (int)a[2];
    case SYS_fallocate: *known_writer = 0; return (int)a[0];
    default: return -1;
  }
}

SHIM_EXPORT long syscall(long nr, ...) {
  long a[6];
  va_list ap;
  va_start(ap, nr);
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  __typeof__(&syscall) real = SHIM_REAL(syscall);
  struct shim_call c;
  int known_writer = 1;
  int fd = changed_fd(nr, a, &known_writer);
  if (fd >= 0) {
    if ((!known_writer || shim_fd_is_pending(fd)) && shim_begin(&c, "syscall")) {
      shim_before_fd_change(&c, fd, known_writer);
      shim_proceed(&c);
      if (c.route == SHIM_ROUTE_FAIL) return shim_blocked(&c);
    }
  } else if (shim_begin(&c, "syscall")) {
    int handled = classify(&c, nr, a);
    if (handled) shim_capture_syscall(&c, nr, a);
    shim_proceed(&c);
    if (!handled) return real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a);
    if (c.route == SHIM_ROUTE_FAIL) return shim_finish(&c, shim_blocked(&c));
    if (c.route == SHIM_ROUTE_STUB && shim_stub_ready()) return shim_finish(&c, shim_stub6(nr, a));
    return shim_finish(&c, real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a));
  }
  return real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a);
}
