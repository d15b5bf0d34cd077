/* syscall(): programs that skip libc's wrappers but not libc (Claude Code's
 * Bun runtime calls syscall(SYS_open) and syscall(SYS_pwritev2), node's
 * copyFileSync syscall(SYS_copy_file_range)). The numbers the filter stops
 * and the shim can classify from their arguments are classified, captured
 * as their wrappers are, and made from the stub when captured; the numbers
 * that change a file through an fd or copy an fd (the write family,
 * fallocate, copy_file_range, splice, a shared mmap, io_submit, a reflink
 * ioctl, the dup family, F_DUPFD, SCM_RIGHTS) are classified like their
 * wrappers (fd_numbers); execve and execveat are the shim's own (exec_number);
 * every other number,
 * openat2 and bind among them, goes to libc's syscall() untouched, where
 * the tracer stops what it must. */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/fd_change.h"
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

/* The numbers that change a file through an fd, or copy an fd, as their
 * wrappers do (fd_change.h): *matched is 1 for them, and the result is 0
 * or the errno the call must fail with (a capture blocked). The filter
 * stops none of them (but ftruncate, classified above), so a pending fd
 * is captured here or never. syscall(SYS_close) is left alone: its mark
 * stays (fd_marks.h). */
static int fd_numbers(long nr, const long* a, int* matched) {
  *matched = 1;
  int fd = (int)a[0];
  switch (nr) {
    case SYS_write: case SYS_pwrite64: case SYS_writev: case SYS_pwritev: case SYS_pwritev2: case SYS_sendfile:
      break;
    case SYS_copy_file_range: case SYS_splice:
      fd = (int)a[2];
      break;
    case SYS_mmap:
      if (!(a[3] & MAP_SHARED)) return 0;
      fd = (int)a[4];
      break;
    case SYS_ioctl:
      if (!shim_ioctl_changes_content((unsigned long)a[1])) return 0;
      break;
    case SYS_fallocate:
      /* Classified on every call, as fallocate(): it may reach an fd the
       * shim never saw opened. */
      return shim_fd_change("syscall", fd, 0);
    case SYS_io_submit:
      return shim_iocbs_writing("syscall", a[1], (struct iocb* const*)a[2]);
    case SYS_fcntl:
      if (a[1] != F_DUPFD && a[1] != F_DUPFD_CLOEXEC) return 0;
      return shim_fd_copying("syscall", fd);
    case SYS_dup:
      return shim_fd_copying("syscall", fd);
    case SYS_dup2: case SYS_dup3: {
      int err = shim_fd_copying("syscall", fd);
      if (err == 0 && a[0] != a[1]) shim_fd_closing((int)a[1]);
      return err;
    }
    case SYS_sendmsg:
      return shim_fds_sending("syscall", (const struct msghdr*)a[1]);
    case SYS_sendmmsg:
      return shim_fds_sending_many("syscall", (const struct mmsghdr*)a[1], (unsigned int)a[2]);
    default:
      *matched = 0;
      return 0;
  }
  return shim_fd_is_pending(fd) ? shim_fd_change("syscall", fd, 1) : 0;
}

/* syscall(SYS_execve) and syscall(SYS_execveat) are the exec they name: made
 * as the shim's own execve and execveat are (the pending fds that survive
 * the exec captured, guard's environment put back), with the same result
 * convention as syscall(). 1 if `nr` is one of them, with *rc its result. */
static int exec_number(long nr, const long* a, long* rc) {
  if (nr == SYS_execve) {
    *rc = execve((const char*)a[0], (char* const*)a[1], (char* const*)a[2]);
    return 1;
  }
  if (nr == SYS_execveat) {
    *rc = execveat((int)a[0], (const char*)a[1], (char* const*)a[2], (char* const*)a[3], (int)a[4]);
    return 1;
  }
  return 0;
}

SHIM_EXPORT long syscall(long nr, ...) {
  long a[6];
  va_list ap;
  va_start(ap, nr);
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  __typeof__(&syscall) real = SHIM_REAL(syscall);
  struct shim_call c;
  long exec_rc;
  if (exec_number(nr, a, &exec_rc)) return exec_rc;
  int matched = 0;
  int err = fd_numbers(nr, a, &matched);
  if (matched) {
    if (err != 0) {
      errno = err;
      return -1;
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
