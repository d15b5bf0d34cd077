/* shim_platform.h on Linux: the shim's own calls, from the stub. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "interpose/linux/syscall_stub.h"
#include "interpose/shim_platform.h"

int shim_platform_write_all(int fd, const void* buf, size_t len) {
  const char* p = buf;
  while (len > 0) {
    long rc = shim_own_syscall(SYS_write, fd, (long)p, (long)len, 0, 0, 0);
    if (rc == -EINTR) continue;
    if (rc <= 0) return -1;
    p += rc;
    len -= (size_t)rc;
  }
  return 0;
}

int shim_platform_getpid(void) { return (int)shim_own_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0); }

void shim_platform_raise(int sig) {
  long pid = shim_own_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
  long tid = shim_own_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0);
  shim_own_syscall(SYS_tgkill, pid, tid, sig, 0, 0, 0);
}

void shim_platform_yield(void) { shim_own_syscall(SYS_sched_yield, 0, 0, 0, 0, 0, 0); }

int shim_platform_fd_cloexec(int fd) {
  long rc = shim_own_syscall(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0);
  if (rc < 0) return -1;
  return (rc & FD_CLOEXEC) ? 1 : 0;
}

/* The ring producer's calls (common/ring_producer.c, GUARD_RING_SYSCALL):
 * syscall()'s contract (-1 and errno), from the stub. Hidden, as every
 * shim_ name. */
long shim_ring_syscall(long nr, ...) {
  long a[6];
  va_list ap;
  va_start(ap, nr);
  for (int i = 0; i < 6; ++i) a[i] = va_arg(ap, long);
  va_end(ap);
  return shim_errno_result(shim_own_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}
