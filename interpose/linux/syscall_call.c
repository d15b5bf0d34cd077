/* syscall(): programs that skip libc's wrappers but not libc (Claude Code's
 * Bun runtime calls syscall(SYS_open) and syscall(SYS_pwritev2), node's
 * copyFileSync syscall(SYS_copy_file_range)). The numbers the filter stops
 * and the shim can classify from their arguments (the rows of
 * common/syscall_table.h with shim 1) are classified and captured as their
 * wrappers are, from the arguments the row names, and made from the stub
 * when captured; the numbers that change a file through an fd or copy an
 * fd (the write family, fallocate, copy_file_range, splice, a shared mmap,
 * io_submit, a reflink ioctl, the dup family, F_DUPFD, SCM_RIGHTS) are
 * classified like their wrappers (fd_numbers); execve and execveat are the
 * shim's own (exec_number); every other number, openat2 and bind among
 * them, goes to libc's syscall() untouched, where the tracer stops what it
 * must. */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/shim_record.h"
#include "common/syscall_table.h"
#include "interpose/fd_marks.h"
#include "interpose/linux/capture_acl.h"
#include "interpose/linux/capture_owner.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/fd_change.h"
#include "interpose/linux/fork_calls.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(syscall);

/* A call's arguments by their roles in its row of the table. */
struct syscall_args {
  int dirfd, dirfd2, fd;
  const char *path, *path2, *target, *xattr_name;
  const void* value;
  size_t size;
  long flags;
  mode_t mode;
};

static long arg(const struct guard_syscall* s, const long* a, char role, long absent) {
  int i = guard_syscall_arg(s, role);
  return i >= 0 ? a[i] : absent;
}

static void read_args(const struct guard_syscall* s, const long* a, struct syscall_args* x) {
  x->dirfd = (int)arg(s, a, 'd', AT_FDCWD);
  x->dirfd2 = (int)arg(s, a, 'D', AT_FDCWD);
  x->fd = (int)arg(s, a, 'f', -1);
  x->path = (const char*)arg(s, a, 'p', 0);
  x->path2 = (const char*)arg(s, a, 'P', 0);
  x->target = (const char*)arg(s, a, 't', 0);
  x->xattr_name = (const char*)arg(s, a, 'x', 0);
  x->value = (const void*)arg(s, a, 'v', 0);
  x->size = (size_t)arg(s, a, 'z', 0);
  x->flags = (long)s->fixed_flags | arg(s, a, 'o', 0);
  x->mode = (mode_t)arg(s, a, 'm', 0);
  /* rmdir is unlinkat's AT_REMOVEDIR, to the shim's delete */
  if (s->action == GUARD_ACTION_Rmdir) x->flags |= AT_REMOVEDIR;
}

/* The row of `nr` if the shim classifies it and makes it from the stub
 * (its shim column), else NULL. */
static const struct guard_syscall* shim_row(long nr) {
  const struct guard_syscall* s = guard_syscall_find(nr);
  return s != NULL && s->shim ? s : NULL;
}

/* Classifies the call as its wrapper does. */
static void classify(struct shim_call* c, const struct guard_syscall* s, const struct syscall_args* x) {
  switch (s->action) {
    case GUARD_ACTION_Open: shim_before_open(c, x->dirfd, x->path, (int)x->flags, x->mode); break;
    case GUARD_ACTION_Rename: shim_before_rename(c, x->dirfd, x->path, x->dirfd2, x->path2, (unsigned)x->flags); break;
    case GUARD_ACTION_Unlink: case GUARD_ACTION_Rmdir: shim_before_delete(c, x->dirfd, x->path, (int)x->flags); break;
    case GUARD_ACTION_Mkdir: shim_before_mkdir(c, x->dirfd, x->path, x->mode); break;
    case GUARD_ACTION_Mknod: shim_before_mknod(c, x->dirfd, x->path, x->mode); break;
    case GUARD_ACTION_Symlink: shim_before_symlink(c, x->target, x->dirfd, x->path); break;
    case GUARD_ACTION_Link: shim_before_link(c, x->dirfd, x->path, x->dirfd2, x->path2); break;
    case GUARD_ACTION_Truncate: shim_before_truncate(c, x->path); break;
    case GUARD_ACTION_Ftruncate: shim_before_fd_change(c, x->fd, 0); break;
    case GUARD_ACTION_Chmod: case GUARD_ACTION_Chown: case GUARD_ACTION_SetAcl:
      shim_before_metadata(c, x->dirfd, x->path, -1, x->xattr_name); break;
    case GUARD_ACTION_Fchmod: case GUARD_ACTION_Fchown: case GUARD_ACTION_FsetAcl:
      shim_before_metadata(c, AT_FDCWD, NULL, x->fd, x->xattr_name); break;
    default: break;
  }
}

/* Captures the classified call as its wrapper does (capture.h). */
static void capture(struct shim_call* c, const struct guard_syscall* s, const struct syscall_args* x) {
  switch (s->action) {
    case GUARD_ACTION_Open: shim_capture_open(c, x->dirfd, x->path, (int)x->flags, x->mode); break;
    case GUARD_ACTION_Rename: shim_capture_rename(c, x->dirfd, x->path, x->dirfd2, x->path2, (unsigned)x->flags); break;
    case GUARD_ACTION_Unlink: case GUARD_ACTION_Rmdir: shim_capture_delete(c, x->dirfd, x->path, (int)x->flags, 0); break;
    case GUARD_ACTION_Mkdir: shim_capture_create(c, GUARD_SHIM_MKDIR, x->dirfd, x->path, x->mode, NULL); break;
    case GUARD_ACTION_Mknod: shim_capture_create(c, GUARD_SHIM_MKNOD, x->dirfd, x->path, x->mode, NULL); break;
    case GUARD_ACTION_Symlink: shim_capture_create(c, GUARD_SHIM_SYMLINK, x->dirfd, x->path, 0, x->target); break;
    case GUARD_ACTION_Link: shim_capture_link(c, x->dirfd, x->path, x->dirfd2, x->path2, (int)x->flags); break;
    case GUARD_ACTION_Truncate: shim_capture_truncate(c, x->path); break;
    case GUARD_ACTION_Chmod: shim_capture_chmod(c, x->dirfd, x->path, x->mode, (int)x->flags); break;
    case GUARD_ACTION_Fchmod: shim_capture_fchmod(c, x->fd, x->mode); break;
    case GUARD_ACTION_Chown: shim_capture_chown(c, x->dirfd, x->path, (int)x->flags); break;
    case GUARD_ACTION_Fchown: shim_capture_fchown(c, x->fd); break;
    case GUARD_ACTION_SetAcl:
      shim_capture_setacl(c, x->path, !(x->flags & AT_SYMLINK_NOFOLLOW), x->xattr_name, x->value, x->size);
      break;
    case GUARD_ACTION_FsetAcl: shim_capture_fsetacl(c, x->fd, x->xattr_name, x->value, x->size); break;
    default: break; /* ftruncate: shim_before_fd_change chose */
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

/* A number the shim classifies, as its wrapper would: its paths copied
 * first and the copies made the call's arguments (capture_path.h,
 * SHIM_PATH_COPY). Apart, so that the copies' room is taken on the stack
 * only by the calls that need it, not by every syscall(SYS_futex). */
static __attribute__((noinline)) long captured_syscall(struct shim_call* c, const struct guard_syscall* row, long nr,
                                                       long* a, __typeof__(&syscall) real) {
  char copies[3][PATH_MAX];
  const char roles[] = {'p', 'P', 't'};
  for (int r = 0; r < 3; ++r) {
    int i = guard_syscall_arg(row, roles[r]);
    if (i >= 0) a[i] = (long)shim_path_copy(copies[r], (const char*)a[i]);
  }
  struct syscall_args x;
  read_args(row, a, &x);
  classify(c, row, &x);
  capture(c, row, &x);
  shim_proceed(c);
  if (c->route == SHIM_ROUTE_FAIL) return shim_finish(c, shim_blocked(c));
  if (c->route == SHIM_ROUTE_STUB && shim_stub_ready()) return shim_finish(c, shim_stub6(nr, a));
  return shim_finish(c, real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a));
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
  shim_fork_number(nr);
  if (exec_number(nr, a, &exec_rc)) return exec_rc;
  int matched = 0;
  int err = fd_numbers(nr, a, &matched);
  if (matched) {
    if (err != 0) {
      errno = err;
      return -1;
    }
  } else if (shim_begin(&c, "syscall")) {
    const struct guard_syscall* row = shim_row(nr);
    if (row != NULL) return captured_syscall(&c, row, nr, a, real);
    shim_proceed(&c);
    return real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a);
  }
  return real != NULL ? real(nr, a[0], a[1], a[2], a[3], a[4], a[5]) : shim_raw6(nr, a);
}
