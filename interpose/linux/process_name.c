#include "interpose/linux/process_name.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "interpose/linux/interposer.h"

/* The kernel's TASK_COMM_LEN, its NUL included. */
#define SHIM_COMM_MAX 16

/* The process's name, in two buffers: a rename writes the one not shown,
 * then publishes it by `shown` (release; a reader's acquire load then sees
 * its bytes). A reader still copying the other buffer when a second rename
 * rewrites it may send a name torn between the two: a label, never a path. */
static char names[2][SHIM_COMM_MAX];
static size_t name_lens[2];
static _Atomic int shown;

/* A thread's own name, once it renamed itself (initial-exec: reentry.h). */
static __thread char thread_name[SHIM_COMM_MAX] __attribute__((tls_model("initial-exec")));
static __thread size_t thread_name_len __attribute__((tls_model("initial-exec")));

static void publish(const char* name, size_t len) {
  int next = 1 - atomic_load_explicit(&shown, memory_order_relaxed);
  memcpy(names[next], name, len);
  name_lens[next] = len;
  atomic_store_explicit(&shown, next, memory_order_release);
}

void shim_process_name_load(void) {
  char buf[SHIM_COMM_MAX + 1];
  long fd = shim_own_syscall(SYS_openat, AT_FDCWD, (long)"/proc/self/comm", O_RDONLY | O_CLOEXEC, 0, 0, 0);
  if (fd < 0) return;  /* no /proc: the supervisor reads /proc/TID/comm itself, if still there */
  long got = shim_own_syscall(SYS_read, fd, (long)buf, sizeof buf, 0, 0, 0);
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  if (got <= 0) return;
  size_t len = (size_t)got;
  if (buf[len - 1] == '\n') --len;
  if (len >= SHIM_COMM_MAX) len = SHIM_COMM_MAX - 1;
  publish(buf, len);
}

size_t shim_process_name(const char** name) {
  if (thread_name_len != 0) {
    *name = thread_name;
    return thread_name_len;
  }
  int i = atomic_load_explicit(&shown, memory_order_acquire);
  *name = names[i];
  return name_lens[i];
}

/* The kernel cuts the name at 15 bytes; so does this. */
static void renamed(const char* name) {
  size_t len = strnlen(name, SHIM_COMM_MAX - 1);
  memcpy(thread_name, name, len);
  thread_name_len = len;
  long pid = shim_own_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
  if (shim_own_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0) == pid) publish(name, len);
}

SHIM_REAL_SLOT(prctl);

/* prctl is interposed for PR_SET_NAME alone; every option goes to the real
 * function unchanged. glibc's prctl reads its variadic arguments as four
 * unsigned longs whatever the option, and so does this. */
SHIM_EXPORT int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a2 = va_arg(ap, unsigned long);
  unsigned long a3 = va_arg(ap, unsigned long);
  unsigned long a4 = va_arg(ap, unsigned long);
  unsigned long a5 = va_arg(ap, unsigned long);
  va_end(ap);
  int rc = (int)SHIM_REAL_OR_RAW(prctl, (option, a2, a3, a4, a5), SYS_prctl, option, (long)a2, (long)a3, (long)a4,
                                 (long)a5, 0);
  if (rc == 0 && option == PR_SET_NAME && a2 != 0) {
    int saved = errno;
    if (shim_enter()) {
      renamed((const char*)a2);
      shim_leave();
    }
    errno = saved;
  }
  return rc;
}
