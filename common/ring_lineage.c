/* ring_lineage.c: a process's parent chain, read from /proc (see the
 * header). Raw system calls only, through the same switch as the ring
 * producer's (the shim makes them from its stub). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common/ring_lineage.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef GUARD_RING_SYSCALL
#define GUARD_RING_SYSCALL syscall
#else
long GUARD_RING_SYSCALL(long nr, ...);
#endif

/* Writes v's decimal digits at path + at; returns the new end. */
static size_t put_number(char* path, size_t at, unsigned v) {
  char digits[12];
  int nd = 0;
  do {
    digits[nd++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (nd > 0) path[at++] = digits[--nd];
  return at;
}

/* The parent of `pid` (field 4 of /proc/PID/stat; for a thread id, its
 * process's parent), or -1 when it cannot be read. */
static int parent_of(int pid) {
  char path[32] = "/proc/";
  size_t at = put_number(path, 6, (unsigned)pid);
  const char tail[] = "/stat";
  for (size_t i = 0; i < sizeof tail; ++i) path[at++] = tail[i];

  int fd = (int)GUARD_RING_SYSCALL(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  /* Field 4 comes right after the state, after comm: within 100 bytes of
   * the last ')', and comm is at most 64 bytes. */
  char buf[512];
  long n = 0;
  for (;;) {
    n = GUARD_RING_SYSCALL(SYS_read, fd, buf, sizeof buf - 1);
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  GUARD_RING_SYSCALL(SYS_close, fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  /* comm may hold spaces and ')': the fields after it start after the
   * last ')'. */
  const char* close = NULL;
  for (long i = 0; i < n; ++i)
    if (buf[i] == ')') close = buf + i;
  if (close == NULL) return -1;
  const char* q = close + 1;
  while (*q == ' ') ++q;
  /* The state, then field 4. A zombie's parent is still its parent. */
  while (*q != ' ' && *q != '\0') ++q;
  if (*q == '\0') return -1;
  ++q;
  int ppid = 0;
  int any = 0;
  for (; *q >= '0' && *q <= '9'; ++q, any = 1) ppid = ppid * 10 + (*q - '0');
  return any ? ppid : -1;
}

/* Whether `tid` is a thread of process `pid`: /proc/PID/task/TID exists. */
static int thread_of(int tid, int pid) {
  char path[64] = "/proc/";
  size_t at = 6;
  at = put_number(path, at, (unsigned)pid);
  const char mid[] = "/task/";
  for (size_t i = 0; i < sizeof mid - 1; ++i) path[at++] = mid[i];
  at = put_number(path, at, (unsigned)tid);
  path[at] = '\0';
  struct stat st;
  return GUARD_RING_SYSCALL(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0;
}

int guard_ring_descends_from(int pid, int ancestor) {
  if (pid <= 0 || ancestor <= 0) return -1;
  if (ancestor == 1) return 1;
  const int first = pid;
  for (int depth = 0; depth < GUARD_RING_LINEAGE_MAX_DEPTH; ++depth) {
    if (pid == ancestor) return 1;
    if (pid <= 1) {
      /* The stat of a thread id gives its process's parent, past the
       * process itself: a thread of the ancestor is found here. */
      return thread_of(first, ancestor);
    }
    pid = parent_of(pid);
    if (pid < 0) return -1;
  }
  return -1;
}
