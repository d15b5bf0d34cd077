/* Which fds hold a pre-image still to capture: opened for writing without
 * O_TRUNC, whose capture waits for the first call that changes the content
 * (write, pwrite, writev, ftruncate, fallocate, copy_file_range into it, a
 * shared mmap of it, and the others docs/shim.md lists) or copies the fd
 * (interpose/linux/fd_change.h). sqlite and git open O_RDWR without always writing, so
 * capturing at the open would copy files nobody changes.
 *
 * A fixed array indexed by fd, one atomic byte each, in .bss: no heap, no
 * lock, safe in signal handlers and after fork. Threads share it as they
 * share the fd table. fds at or beyond SHIM_FD_MARKS cannot be marked: the
 * shim captures those right after the open, before the host sees the fd
 * (nothing can have written through it yet). */
#ifndef GUARD_INTERPOSE_FD_MARKS_H_
#define GUARD_INTERPOSE_FD_MARKS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHIM_FD_MARKS 65536

enum shim_fd_mark {
  SHIM_FD_CLEAN = 0,     /* unknown to the shim: not open, read-only, or opened elsewhere */
  SHIM_FD_PENDING = 1,   /* capture at the first change */
  SHIM_FD_CAPTURING = 2, /* one thread is capturing; the others wait */
  SHIM_FD_CAPTURED = 3,  /* opened for writing through the shim, content already captured */
  /* Opened by an O_CREAT|O_EXCL creation the shim recorded, inside the
   * root: the fd's inode was new in this session, so nothing about it has
   * a past to save. A change of its mode or owner through an fd that still
   * names that inode (its id, below, checked by an fstat) is left
   * unrecorded (docs/shim.md, "Files the session created"). */
  SHIM_FD_CREATED = 4,
};

/* 1 if `fd` could be marked (within the table). */
int shim_fd_markable(int fd);

void shim_fd_mark_pending(int fd);
/* An fd opened for writing whose content is captured (O_TRUNC) or new. */
void shim_fd_mark_captured(int fd);
/* An fd whose inode the shim's recorded O_EXCL creation made (above);
 * `id` is shim_fd_inode_id of that inode. */
void shim_fd_mark_created(int fd, uint64_t id);
/* The id a CREATED mark holds; 0 for any other mark. The caller compares
 * it with the inode the fd names now: a mark outlives its fd when the host
 * closes it by a raw system call, and a vfork child reads its parent's. */
uint64_t shim_fd_created_id(int fd);
/* A non-zero 64-bit name of an inode (device and number, mixed). */
uint64_t shim_fd_inode_id(uint64_t dev, uint64_t ino);
/* 1 if `fd`'s mark is CAPTURED or CREATED: clearing such a mark wrongly
 * (a vfork child's close, whose marks are its parent's) costs the parent
 * at most a capture it did not need, never a pre-image. */
int shim_fd_is_settled(int fd);
/* 1 if the shim saw `fd` opened for writing (any state but CLEAN): an
 * ftruncate or fallocate of an fd it did not see captures by fd. */
int shim_fd_is_known(int fd);
void shim_fd_clear(int fd);
int shim_fd_is_pending(int fd);

/* One more than the highest fd ever marked pending in this process: the
 * bound of a scan over every mark (exec captures what is pending). */
int shim_fd_scan_limit(void);
/* In a fork's child: a mark another thread of the parent was capturing
 * (CAPTURING) names a capture no thread of the child will finish, and a
 * claim would wait on it forever; it becomes PENDING again, so the child's
 * first change captures for itself (the supervisor keeps the first
 * pre-image of a file). */
void shim_fd_marks_forked(void);

/* Claims the capture of a pending fd: returns 1 if the caller must capture
 * and then call shim_fd_captured; 0 if there is nothing to capture (the fd
 * was clean, or another thread captured it: this call waits until that
 * capture is done, so no change through the fd can precede it). */
int shim_fd_claim(int fd);
void shim_fd_captured(int fd);
/* A claimed capture that failed: the fd is pending again. */
void shim_fd_unclaim(int fd);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_FD_MARKS_H_ */
