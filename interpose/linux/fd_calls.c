/* Changes through an fd: the write family and shared mmaps (where a lazily
 * captured open is captured: fd_marks.h), ftruncate, fallocate,
 * copy_file_range, sendfile and splice into it, a reflink clone into it
 * (ioctl FICLONE, FICLONERANGE), and the calls that end or copy an fd
 * (close, dup, dup2, dup3), which keep the marks right. The other ways an fd
 * reaches another number or process are in fd_pass_calls.c, the
 * asynchronous writes in aio_calls.c.
 *
 * write and friends are the hottest calls any program makes: on an fd with
 * nothing pending they cost one load of the mark before the real function. */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/fd_change.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(write);
SHIM_REAL_SLOT(pwrite);
SHIM_REAL_SLOT(writev);
SHIM_REAL_SLOT(pwritev);
SHIM_REAL_SLOT(pwritev2);
SHIM_REAL_SLOT(mmap);
SHIM_REAL_SLOT(ftruncate);
SHIM_REAL_SLOT(fallocate);
SHIM_REAL_SLOT(posix_fallocate);
SHIM_REAL_SLOT(copy_file_range);
SHIM_REAL_SLOT(sendfile);
SHIM_REAL_SLOT(splice);
SHIM_REAL_SLOT(ioctl);
SHIM_REAL_SLOT(close);
SHIM_REAL_SLOT(dup);
SHIM_REAL_SLOT(dup2);
SHIM_REAL_SLOT(dup3);

/* A change made while this thread is inside the shim's own work (a signal
 * handler interrupting it) is not classified: through a pending fd it
 * follows the capture-failure policy (reentered.h). */
int shim_fd_change(const char* entry, int fd, int known_writer) {
  struct shim_call c;
  if (!shim_begin(&c, entry)) return shim_reentered_fd_change(entry, fd, known_writer);
  shim_before_fd_change(&c, fd, known_writer);
  shim_proceed(&c);
  return c.route == SHIM_ROUTE_FAIL ? c.fail_errno : 0;
}

/* The change fails with the capture's errno when blocked. */
#define SHIM_FD_CHANGE(entry, fd, known_writer, failed) \
  do {                                                   \
    int err_ = shim_fd_change(entry, fd, known_writer);  \
    if (err_ != 0) {                                     \
      errno = err_;                                      \
      return failed;                                     \
    }                                                    \
  } while (0)

static ssize_t write_any(const char* entry, int fd, const void* buf, size_t n) {
  if (shim_fd_is_pending(fd)) SHIM_FD_CHANGE(entry, fd, 1, -1);
  return SHIM_REAL_OR_RAW(write, (fd, buf, n), SYS_write, fd, (long)buf, (long)n);
}

SHIM_EXPORT ssize_t write(int fd, const void* buf, size_t n) { return write_any("write", fd, buf, n); }

/* glibc's public __write, __pwrite64, __close and __dup2 (GLIBC_2.2.5) are
 * the same functions under other names: a program calling them by name
 * must not pass the lazy capture by. */
ssize_t __write(int fd, const void* buf, size_t n);
SHIM_EXPORT ssize_t __write(int fd, const void* buf, size_t n) { return write_any("__write", fd, buf, n); }

static ssize_t pwrite_any(const char* entry, int fd, const void* buf, size_t n, off_t off) {
  if (shim_fd_is_pending(fd)) SHIM_FD_CHANGE(entry, fd, 1, -1);
  return SHIM_REAL_OR_RAW(pwrite, (fd, buf, n, off), SYS_pwrite64, fd, (long)buf, (long)n, (long)off);
}

SHIM_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) { return pwrite_any("pwrite", fd, buf, n, off); }
SHIM_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  return pwrite_any("pwrite64", fd, buf, n, off);
}
ssize_t __pwrite64(int fd, const void* buf, size_t n, off_t off);
SHIM_EXPORT ssize_t __pwrite64(int fd, const void* buf, size_t n, off_t off) {
  return pwrite_any("__pwrite64", fd, buf, n, off);
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  if (shim_fd_is_pending(fd)) SHIM_FD_CHANGE("writev", fd, 1, -1);
  return SHIM_REAL_OR_RAW(writev, (fd, iov, cnt), SYS_writev, fd, (long)iov, cnt);
}

static ssize_t pwritev_any(const char* entry, int fd, const struct iovec* iov, int cnt, off_t off) {
  if (shim_fd_is_pending(fd)) SHIM_FD_CHANGE(entry, fd, 1, -1);
  /* The raw call splits the offset in two longs (the kernel's pos_l, pos_h). */
  return SHIM_REAL_OR_RAW(pwritev, (fd, iov, cnt, off), SYS_pwritev, fd, (long)iov, cnt, (long)off, 0);
}

SHIM_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  return pwritev_any("pwritev", fd, iov, cnt, off);
}
SHIM_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off_t off) {
  return pwritev_any("pwritev64", fd, iov, cnt, off);
}

static ssize_t pwritev2_any(const char* entry, int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  if (shim_fd_is_pending(fd)) SHIM_FD_CHANGE(entry, fd, 1, -1);
  return SHIM_REAL_OR_RAW(pwritev2, (fd, iov, cnt, off, flags), SYS_pwritev2, fd, (long)iov, cnt, (long)off, 0,
                          flags);
}

SHIM_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  return pwritev2_any("pwritev2", fd, iov, cnt, off, flags);
}
SHIM_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int cnt, off_t off, int flags) {
  return pwritev2_any("pwritev64v2", fd, iov, cnt, off, flags);
}

/* A shared mapping of a pending fd is captured at the mmap, even read-only:
 * mprotect can make it writable later without naming the fd. */
static void* mmap_any(const char* entry, void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if ((flags & MAP_SHARED) && shim_fd_is_pending(fd)) SHIM_FD_CHANGE(entry, fd, 1, MAP_FAILED);
  __typeof__(&mmap) real = SHIM_REAL(mmap);
  if (real != NULL) return real(addr, len, prot, flags, fd, off);
  return (void*)shim_raw6(SYS_mmap, SHIM_LONGS6((long)addr, (long)len, prot, flags, fd, (long)off));
}

SHIM_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap_any("mmap", addr, len, prot, flags, fd, off);
}
SHIM_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap_any("mmap64", addr, len, prot, flags, fd, off);
}

/* ftruncate, fallocate: classified on every call (they are rare), since
 * they may reach an fd the shim never saw opened; ftruncate is a call the
 * filter stops, so it is made from the stub. */
static int ftruncate_any(const char* entry, int fd, off_t length) {
  struct shim_call c;
  if (!shim_begin(&c, entry)) {
    SHIM_REENTERED(shim_reentered_traced(entry), -1);
    return (int)SHIM_REAL_OR_RAW(ftruncate, (fd, length), SYS_ftruncate, fd, (long)length);
  }
  shim_before_fd_change(&c, fd, 0);
  shim_proceed(&c);
  return (int)shim_finish(&c, SHIM_HOST(&c, ftruncate, (fd, length), SYS_ftruncate, fd, (long)length));
}

SHIM_EXPORT int ftruncate(int fd, off_t length) { return ftruncate_any("ftruncate", fd, length); }
SHIM_EXPORT int ftruncate64(int fd, off_t length) { return ftruncate_any("ftruncate64", fd, length); }

static int fallocate_any(const char* entry, int fd, int mode, off_t off, off_t len) {
  SHIM_FD_CHANGE(entry, fd, 0, -1);
  return (int)SHIM_REAL_OR_RAW(fallocate, (fd, mode, off, len), SYS_fallocate, fd, mode, (long)off, (long)len);
}

SHIM_EXPORT int fallocate(int fd, int mode, off_t off, off_t len) { return fallocate_any("fallocate", fd, mode, off, len); }
SHIM_EXPORT int fallocate64(int fd, int mode, off_t off, off_t len) {
  return fallocate_any("fallocate64", fd, mode, off, len);
}

/* posix_fallocate returns its error instead of setting errno; glibc falls
 * back to writing zeros where fallocate is unsupported, so glibc's own runs. */
static int posix_fallocate_any(const char* entry, int fd, off_t off, off_t len) {
  int blocked = shim_fd_change(entry, fd, 0);
  if (blocked != 0) return blocked;
  __typeof__(&posix_fallocate) real = SHIM_REAL(posix_fallocate);
  return real != NULL ? real(fd, off, len) : ENOSYS;
}

SHIM_EXPORT int posix_fallocate(int fd, off_t off, off_t len) { return posix_fallocate_any("posix_fallocate", fd, off, len); }
SHIM_EXPORT int posix_fallocate64(int fd, off_t off, off_t len) {
  return posix_fallocate_any("posix_fallocate64", fd, off, len);
}

SHIM_EXPORT ssize_t copy_file_range(int fd_in, off_t* off_in, int fd_out, off_t* off_out, size_t len,
                                    unsigned int flags) {
  SHIM_FD_CHANGE("copy_file_range", fd_out, 1, -1);
  return SHIM_REAL_OR_RAW(copy_file_range, (fd_in, off_in, fd_out, off_out, len, flags), SYS_copy_file_range, fd_in,
                          (long)off_in, fd_out, (long)off_out, (long)len, flags);
}

static ssize_t sendfile_any(const char* entry, int out_fd, int in_fd, off_t* off, size_t count) {
  if (shim_fd_is_pending(out_fd)) SHIM_FD_CHANGE(entry, out_fd, 1, -1);
  return SHIM_REAL_OR_RAW(sendfile, (out_fd, in_fd, off, count), SYS_sendfile, out_fd, in_fd, (long)off,
                          (long)count);
}

SHIM_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t* off, size_t count) {
  return sendfile_any("sendfile", out_fd, in_fd, off, count);
}
SHIM_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off_t* off, size_t count) {
  return sendfile_any("sendfile64", out_fd, in_fd, off, count);
}

SHIM_EXPORT ssize_t splice(int fd_in, loff_t* off_in, int fd_out, loff_t* off_out, size_t len, unsigned int flags) {
  if (shim_fd_is_pending(fd_out)) SHIM_FD_CHANGE("splice", fd_out, 1, -1);
  return SHIM_REAL_OR_RAW(splice, (fd_in, off_in, fd_out, off_out, len, flags), SYS_splice, fd_in, (long)off_in,
                          fd_out, (long)off_out, (long)len, flags);
}

/* 1 if ioctl `request` on `fd` replaces content of the file `fd` names (a
 * reflink clone of another file's extents into it). FIDEDUPERANGE shares
 * only extents whose bytes are equal: no content changes. */
int shim_ioctl_changes_content(unsigned long request) { return request == FICLONE || request == FICLONERANGE; }

/* ioctl is on every terminal check (isatty): one compare of the request
 * before the real function. Its third argument is read as a pointer-sized
 * word, as the kernel takes it. */
SHIM_EXPORT int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  if (shim_ioctl_changes_content(request) && shim_fd_is_pending(fd)) SHIM_FD_CHANGE("ioctl", fd, 1, -1);
  return (int)SHIM_REAL_OR_RAW(ioctl, (fd, request, arg), SYS_ioctl, fd, (long)request, (long)arg);
}

/* The mark of an fd ends with it: cleared before the close, so that a
 * number the kernel hands out again starts clean. */
void shim_fd_closing(int fd) {
  if (!shim_fd_is_known(fd)) return;
  /* A settled mark (captured, or created) is cleared without asking whose
   * the marks are (a getpid): a vfork child clearing its parent's costs the
   * parent no pre-image (fd_marks.h). A pending one asks. */
  if (shim_fd_is_settled(fd)) {
    shim_fd_clear(fd);
    return;
  }
  struct shim_call c;
  if (!shim_begin(&c, "close")) return;
  shim_before_close(&c, fd);
  shim_proceed(&c);
}

int shim_fd_copying(const char* entry, int fd) {
  if (!shim_fd_is_pending(fd)) return 0;
  struct shim_call c;
  if (!shim_begin(&c, entry)) return 0;
  shim_before_dup(&c, fd);
  shim_proceed(&c);
  return c.route == SHIM_ROUTE_FAIL ? c.fail_errno : 0;
}

#define SHIM_FD_COPYING(entry, fd)     \
  do {                                 \
    int err_ = shim_fd_copying(entry, fd); \
    if (err_ != 0) {                   \
      errno = err_;                    \
      return -1;                       \
    }                                  \
  } while (0)

SHIM_EXPORT int close(int fd) {
  shim_fd_closing(fd);
  return (int)SHIM_REAL_OR_RAW(close, (fd), SYS_close, fd);
}

int __close(int fd);
SHIM_EXPORT int __close(int fd) { return close(fd); }

SHIM_EXPORT int dup(int fd) {
  SHIM_FD_COPYING("dup", fd);
  return (int)SHIM_REAL_OR_RAW(dup, (fd), SYS_dup, fd);
}

static int dup2_any(const char* entry, int oldfd, int newfd) {
  SHIM_FD_COPYING(entry, oldfd);
  if (oldfd != newfd) shim_fd_closing(newfd);
  return (int)SHIM_REAL_OR_RAW(dup2, (oldfd, newfd), SYS_dup2, oldfd, newfd);
}

SHIM_EXPORT int dup2(int oldfd, int newfd) { return dup2_any("dup2", oldfd, newfd); }

int __dup2(int oldfd, int newfd);
SHIM_EXPORT int __dup2(int oldfd, int newfd) { return dup2_any("__dup2", oldfd, newfd); }

SHIM_EXPORT int dup3(int oldfd, int newfd, int flags) {
  SHIM_FD_COPYING("dup3", oldfd);
  if (oldfd != newfd) shim_fd_closing(newfd);
  return (int)SHIM_REAL_OR_RAW(dup3, (oldfd, newfd, flags), SYS_dup3, oldfd, newfd, flags);
}
