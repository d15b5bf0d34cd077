/* ring_os.h on macOS: __ulock for the futex, proc_pidinfo for /proc.
 * Declared here from Apple's published sources (xnu's sys/ulock.h and
 * libproc.h), as the SDK's headers do not all carry them. Never run on a
 * Mac here: docs/macos.md. */
#pragma once

#include <sys/mman.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/proc.h>
#include <sys/proc_info.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif
/* libSystem's wait-on-address, what libc++'s std::atomic::wait uses there
 * (os_sync_wait_on_address is public only from macOS 14.4). */
int __ulock_wait(uint32_t operation, void* addr, uint64_t value, uint32_t timeout_us);
int __ulock_wake(uint32_t operation, void* addr, uint64_t wake_value);
int proc_pidinfo(int pid, int flavor, uint64_t arg, void* buffer, int buffersize);
#ifdef __cplusplus
}
#endif

#define GUARD_UL_COMPARE_AND_WAIT_SHARED 3u /* the word may be in shared memory */
#define GUARD_ULF_WAKE_ALL 0x00000100u
#define GUARD_ULF_NO_ERRNO 0x01000000u

static inline long ring_os_futex_wait(uint32_t* word, uint32_t expected, long ns) {
  long us = ns / 1000;
  if (us <= 0) us = 1; /* 0 would mean forever */
  if (us > 0xFFFFFFFFL) us = 0xFFFFFFFFL;
  return __ulock_wait(GUARD_UL_COMPARE_AND_WAIT_SHARED | GUARD_ULF_NO_ERRNO, word, expected, (uint32_t)us);
}

static inline void ring_os_futex_wake_all(uint32_t* word) {
  (void)__ulock_wake(GUARD_UL_COMPARE_AND_WAIT_SHARED | GUARD_ULF_WAKE_ALL | GUARD_ULF_NO_ERRNO, word, 0);
}

static inline int64_t ring_os_now_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int ring_os_bsdinfo(int pid, struct proc_bsdinfo* info) {
  return proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, info, (int)sizeof *info) == (int)sizeof *info;
}

/* The start time in microseconds since the epoch (the unit differs from
 * Linux's clock ticks; only equality is ever asked of it). */
static inline uint64_t ring_os_start_ticks(int pid) {
  struct proc_bsdinfo info;
  if (!ring_os_bsdinfo(pid == 0 ? (int)getpid() : pid, &info) || info.pbi_status == SZOMB) return 0;
  return (uint64_t)info.pbi_start_tvsec * 1000000u + (uint64_t)info.pbi_start_tvusec;
}

static inline int ring_os_parent_of(int pid) {
  struct proc_bsdinfo info;
  return ring_os_bsdinfo(pid, &info) ? (int)info.pbi_ppid : -1;
}

/* macOS thread ids are not process ids: a tid is never a process's. */
static inline int ring_os_thread_of(int tid, int pid) {
  (void)tid;
  (void)pid;
  return 0;
}

/* No pid namespaces. */
static inline uint64_t ring_os_pid_ns_inode(void) { return 0; }

/* Drops this process's mapping of [addr, addr+len) of a shared segment
 * (MADV_DONTNEED; never run on a Mac: nothing produces into a ring there,
 * and the consumer's give-back is its only caller). */
static inline void ring_os_give_back(void* addr, size_t len) { (void)madvise(addr, len, MADV_DONTNEED); }
