/* Asynchronous writes: POSIX AIO (aio_write, lio_listio, whose writes glibc
 * makes from a thread of its own through its internal pwrite, which no
 * interposition sees) and Linux AIO (libaio's io_submit, a raw system call
 * the filter does not stop). Each write they queue reaches its fd after the
 * call returns, so a pending capture of that fd is made before they queue
 * it (fd_change.h). glibc declares the control blocks and the list
 * non-null, and dereferences them itself. */
#include <aio.h>
#include <errno.h>
#include <linux/aio_abi.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/fd_change.h"
#include "interpose/linux/interposer.h"

/* libaio's entry point (libaio.h is not needed to stand in front of it):
 * its io_context_t is a pointer, its struct iocb the kernel's layout. */
int io_submit(void* ctx, long nr, struct iocb** iocbs);

SHIM_REAL_SLOT(aio_write);
SHIM_REAL_SLOT(aio_write64);
SHIM_REAL_SLOT(lio_listio);
SHIM_REAL_SLOT(lio_listio64);
SHIM_REAL_SLOT(io_submit);

static int write_queued(const char* entry, int opcode, int fd) {
  if (opcode != LIO_WRITE || !shim_fd_is_pending(fd)) return 0;
  return shim_fd_change(entry, fd, 1);
}

/* aio_write and lio_listio, and their 64-bit names (the same layout on
 * x86_64), each with its real function. */
#define SHIM_AIO_WRITE(name, cb_type)                          \
  SHIM_EXPORT int name(cb_type* cb) {                          \
    int err = write_queued(#name, LIO_WRITE, cb->aio_fildes);  \
    if (err != 0) {                                            \
      errno = err;                                             \
      return -1;                                               \
    }                                                          \
    __typeof__(&name) real = SHIM_REAL(name);                  \
    if (real == NULL) {                                        \
      errno = ENOSYS;                                          \
      return -1;                                               \
    }                                                          \
    return real(cb);                                           \
  }

#define SHIM_LIO_LISTIO(name, cb_type)                                                   \
  SHIM_EXPORT int name(int mode, cb_type* const list[], int count, struct sigevent* sig) { \
    for (int i = 0; i < count; ++i) {                                                    \
      int err = list[i] != NULL ? write_queued(#name, list[i]->aio_lio_opcode, list[i]->aio_fildes) : 0; \
      if (err != 0) {                                                                    \
        errno = err;                                                                     \
        return -1;                                                                       \
      }                                                                                  \
    }                                                                                    \
    __typeof__(&name) real = SHIM_REAL(name);                                            \
    if (real == NULL) {                                                                  \
      errno = ENOSYS;                                                                    \
      return -1;                                                                         \
    }                                                                                    \
    return real(mode, list, count, sig);                                                 \
  }

SHIM_AIO_WRITE(aio_write, struct aiocb)
SHIM_AIO_WRITE(aio_write64, struct aiocb64)
SHIM_LIO_LISTIO(lio_listio, struct aiocb)
SHIM_LIO_LISTIO(lio_listio64, struct aiocb64)

int shim_iocbs_writing(const char* entry, long nr, struct iocb* const* iocbs) {
  for (long i = 0; iocbs != NULL && i < nr; ++i) {
    const struct iocb* cb = iocbs[i];
    if (cb == NULL) continue;
    if (cb->aio_lio_opcode != IOCB_CMD_PWRITE && cb->aio_lio_opcode != IOCB_CMD_PWRITEV) continue;
    int fd = (int)cb->aio_fildes;
    if (!shim_fd_is_pending(fd)) continue;
    int err = shim_fd_change(entry, fd, 1);
    if (err != 0) return err;
  }
  return 0;
}

/* libaio returns the kernel's result as is: the count submitted, or a
 * negative errno (errno itself untouched). */
SHIM_EXPORT int io_submit(void* ctx, long nr, struct iocb** iocbs) {
  int saved = errno;
  int err = shim_iocbs_writing("io_submit", nr, iocbs);
  errno = saved;
  if (err != 0) return -err;
  __typeof__(&io_submit) real = SHIM_REAL(io_submit);
  if (real != NULL) return real(ctx, nr, iocbs);
  return (int)shim_raw_syscall(SYS_io_submit, (long)ctx, nr, (long)iocbs, 0, 0, 0);
}
