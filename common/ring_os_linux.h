/* ring_os.h on Linux: futex and /proc, through GUARD_RING_SYSCALL (libc's
 * syscall() unless the includer names another, as the shim does). */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef GUARD_RING_SYSCALL
#define GUARD_RING_SYSCALL syscall
#endif

static inline long ring_os_futex_wait(uint32_t* word, uint32_t expected, long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  return GUARD_RING_SYSCALL(SYS_futex, word, FUTEX_WAIT, expected, &ts, NULL, 0);
}

/* Drops this process's mapping of [addr, addr+len) of a shared segment
 * (MADV_DONTNEED: page-table entries only; the segment keeps the data). */
static inline void ring_os_give_back(void* addr, size_t len) {
  GUARD_RING_SYSCALL(SYS_madvise, (long)addr, (long)len, MADV_DONTNEED);
}

static inline void ring_os_futex_wake_all(uint32_t* word) {
  GUARD_RING_SYSCALL(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

static inline int64_t ring_os_now_ns(void) {
  struct timespec ts;
  if (GUARD_RING_SYSCALL(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline size_t ring_os_put_number(char* path, size_t at, unsigned v) {
  char digits[12];
  int nd = 0;
  do {
    digits[nd++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (nd > 0) path[at++] = digits[--nd];
  return at;
}

/* Field 22 of /proc/PID/stat (/proc/self for 0), in clock ticks. */
static inline uint64_t ring_os_start_ticks(int pid) {
  char path[32] = "/proc/";
  size_t at = 6;
  if (pid == 0) {
    memcpy(path + at, "self", 4);
    at += 4;
  } else {
    char digits[12];
    int nd = 0;
    for (unsigned v = (unsigned)pid; v != 0; v /= 10) digits[nd++] = (char)('0' + v % 10);
    while (nd > 0) path[at++] = digits[--nd];
  }
  memcpy(path + at, "/stat", 6);

  int fd = (int)GUARD_RING_SYSCALL(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  /* Up to field 22 the line is at most ~450 bytes (a 64-byte comm, numbers of
   * at most 20 digits). */
  char buf[1024];
  size_t n = 0;
  while (n < sizeof buf - 1) {
    long got = GUARD_RING_SYSCALL(SYS_read, fd, buf + n, sizeof buf - 1 - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  GUARD_RING_SYSCALL(SYS_close, fd);
  buf[n] = '\0';

  /* comm (field 2) is in parentheses and may hold spaces and ')': the fields
   * after it start after the last ')'. */
  char* close = NULL;
  for (size_t i = 0; i < n; ++i)
    if (buf[i] == ')') close = buf + i;
  if (close == NULL) return 0;
  const char* q = close + 1;
  while (*q == ' ') ++q;
  /* Field 3, the state: a zombie has no future writes; it counts as gone. */
  if (*q == 'Z' || *q == 'X' || *q == 'x' || *q == '\0') return 0;
  for (int field = 3; field < 22; ++field) {
    while (*q != ' ' && *q != '\0') ++q;
    if (*q == '\0') return 0;
    ++q;
  }
  uint64_t ticks = 0;
  int any = 0;
  for (; *q >= '0' && *q <= '9'; ++q, any = 1) ticks = ticks * 10 + (uint64_t)(*q - '0');
  return any ? ticks : 0;
}

static inline int ring_os_parent_of(int pid) {
  char path[32] = "/proc/";
  size_t at = ring_os_put_number(path, 6, (unsigned)pid);
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

static inline int ring_os_thread_of(int tid, int pid) {
  char path[64] = "/proc/";
  size_t at = 6;
  at = ring_os_put_number(path, at, (unsigned)pid);
  const char mid[] = "/task/";
  for (size_t i = 0; i < sizeof mid - 1; ++i) path[at++] = mid[i];
  at = ring_os_put_number(path, at, (unsigned)tid);
  path[at] = '\0';
  struct stat st;
  return GUARD_RING_SYSCALL(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0;
}

static inline uint64_t ring_os_pid_ns_inode(void) {
  struct statx stx;
  if (GUARD_RING_SYSCALL(SYS_statx, AT_FDCWD, "/proc/self/ns/pid", 0, STATX_INO, &stx) != 0) return 0;
  return stx.stx_ino;
}
