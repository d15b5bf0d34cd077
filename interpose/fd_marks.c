#include "interpose/fd_marks.h"

#include <stdatomic.h>

#include "common/mix64.h"
#include "interpose/shim_platform.h"

static _Atomic unsigned char marks[SHIM_FD_MARKS];
static _Atomic int scan_limit;

int shim_fd_markable(int fd) { return fd >= 0 && fd < SHIM_FD_MARKS; }

void shim_fd_mark_pending(int fd) {
  /* Release: whoever later claims the mark sees the open completed. */
  if (!shim_fd_markable(fd)) return;
  /* Relaxed: the limit only bounds scans; the mark's own release orders it. */
  int limit = atomic_load_explicit(&scan_limit, memory_order_relaxed);
  while (limit <= fd &&
         !atomic_compare_exchange_weak_explicit(&scan_limit, &limit, fd + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
  atomic_store_explicit(&marks[fd], SHIM_FD_PENDING, memory_order_release);
}

int shim_fd_scan_limit(void) { return atomic_load_explicit(&scan_limit, memory_order_relaxed); }

void shim_fd_marks_forked(void) {
  /* Relaxed: the child is single-threaded here (an atfork child handler). */
  int limit = shim_fd_scan_limit();
  for (int fd = 0; fd < limit; ++fd) {
    if (atomic_load_explicit(&marks[fd], memory_order_relaxed) == SHIM_FD_CAPTURING) {
      atomic_store_explicit(&marks[fd], SHIM_FD_PENDING, memory_order_relaxed);
    }
  }
}

void shim_fd_clear(int fd) {
  /* Relaxed: a close races only with calls that already use a dying fd. */
  if (shim_fd_markable(fd)) atomic_store_explicit(&marks[fd], SHIM_FD_CLEAN, memory_order_relaxed);
}

void shim_fd_mark_captured(int fd) {
  /* Relaxed: only ftruncate's and fallocate's choice reads it. */
  if (shim_fd_markable(fd)) atomic_store_explicit(&marks[fd], SHIM_FD_CAPTURED, memory_order_relaxed);
}

int shim_fd_is_known(int fd) {
  return shim_fd_markable(fd) && atomic_load_explicit(&marks[fd], memory_order_relaxed) != SHIM_FD_CLEAN;
}

/* The inode a CREATED mark's fd named, by shim_fd_inode_id; meaningful
 * only while marks[fd] is CREATED. (512 KiB of .bss: pages are touched,
 * and so made, only for the fd numbers a process uses.) */
static _Atomic uint64_t created_ids[SHIM_FD_MARKS];

void shim_fd_mark_created(int fd, uint64_t id) {
  if (!shim_fd_markable(fd)) return;
  atomic_store_explicit(&created_ids[fd], id, memory_order_relaxed);
  /* Release: a thread that sees CREATED (acquire below) sees this id. */
  atomic_store_explicit(&marks[fd], SHIM_FD_CREATED, memory_order_release);
}

uint64_t shim_fd_created_id(int fd) {
  if (!shim_fd_markable(fd) || atomic_load_explicit(&marks[fd], memory_order_acquire) != SHIM_FD_CREATED) return 0;
  return atomic_load_explicit(&created_ids[fd], memory_order_relaxed);
}

uint64_t shim_fd_inode_id(uint64_t dev, uint64_t ino) {
  /* The pair folded and mixed: distinct inodes collide with probability
   * 2^-64. */
  uint64_t z = guard_mix64(ino + GUARD_MIX64_STEP * (dev + 1));
  return z != 0 ? z : 1;
}

int shim_fd_is_settled(int fd) {
  if (!shim_fd_markable(fd)) return 0;
  unsigned char m = atomic_load_explicit(&marks[fd], memory_order_relaxed);
  return m == SHIM_FD_CAPTURED || m == SHIM_FD_CREATED;
}

int shim_fd_is_pending(int fd) {
  /* Acquire pairs with mark_pending's release. The common case, an fd with
   * nothing pending, is this one load. */
  if (!shim_fd_markable(fd)) return 0;
  unsigned char m = atomic_load_explicit(&marks[fd], memory_order_acquire);
  return m == SHIM_FD_PENDING || m == SHIM_FD_CAPTURING;
}

int shim_fd_claim(int fd) {
  if (!shim_fd_markable(fd)) return 0;
  for (;;) {
    unsigned char seen = SHIM_FD_PENDING;
    /* acq_rel on success: the claimer owns the capture from here on, and
     * its stores cannot be reordered before the claim. */
    if (atomic_compare_exchange_strong_explicit(&marks[fd], &seen, SHIM_FD_CAPTURING, memory_order_acq_rel,
                                                memory_order_acquire)) {
      return 1;
    }
    if (seen == SHIM_FD_CLEAN || seen == SHIM_FD_CAPTURED || seen == SHIM_FD_CREATED) return 0;
    /* Another thread is capturing: its pre-image must be in the log before
     * this thread's change proceeds. The capture is short (a link or a copy
     * into the pending area), so yielding is enough. */
    shim_platform_yield();
  }
}

void shim_fd_captured(int fd) {
  /* Release: the waiting threads' acquire sees the capture complete. */
  if (shim_fd_markable(fd)) atomic_store_explicit(&marks[fd], SHIM_FD_CAPTURED, memory_order_release);
}

void shim_fd_unclaim(int fd) {
  /* Release, as shim_fd_captured: the waiting threads claim it again. */
  if (shim_fd_markable(fd)) atomic_store_explicit(&marks[fd], SHIM_FD_PENDING, memory_order_release);
}
