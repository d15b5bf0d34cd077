/* The capture of the pathname calls and of fchmod (docs/shim.md, "What
 * the shim captures"): per call, the rules that decide between capturing it
 * here (its pre-image into the pending area, its CALL record into the ring,
 * then the host's call from the stub, then its OUTCOME) and leaving it to
 * the tracer (the real function, which the filter stops). A fallback is
 * always safe, so every case the rules do not cover falls back. Each
 * shim_capture_<kind> runs after the classification (shim_before_<kind>),
 * under the reentrancy guard, and sets c->route; shim_capture_after puts
 * the OUTCOME of a recorded call. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_H_

#include <stdint.h>
#include <sys/types.h>

#include "interpose/shim_capture.h"

void shim_capture_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode);
/* unlink, unlinkat, rmdir (AT_REMOVEDIR) and remove (`is_remove`: an unlink
 * that becomes an rmdir on a directory). */
void shim_capture_delete(struct shim_call* c, int dirfd, const char* path, int at_flags, int is_remove);
void shim_capture_rename(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                         unsigned flags);
/* mkdir, mknod (mode with its type bits), symlink (`target`): a record alone. */
void shim_capture_create(struct shim_call* c, uint32_t action, int dirfd, const char* path, mode_t mode,
                         const char* target);
void shim_capture_link(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                       int flags);
void shim_capture_truncate(struct shim_call* c, const char* path);
void shim_capture_chmod(struct shim_call* c, int dirfd, const char* path, mode_t mode, int flags);
/* 1 if `fd` names the inode this process's recorded O_EXCL creation inside
 * the root made (capture.c): one fstat. */
int shim_fd_created_here(int fd);
void shim_capture_fchmod(struct shim_call* c, int fd, mode_t mode);
/* chown, lchown (AT_SYMLINK_NOFOLLOW), fchownat: from the stub unrecorded
 * when it changes the owner alone, recorded as the chmod it amounts to when
 * the kernel will clear set-id bits (supervisor: ModeChangeOf). */
void shim_capture_chown(struct shim_call* c, int dirfd, const char* path, int flags);

/* A call glibc makes by itself (fopen, the mkstemp family): the tracer's;
 * its fd is not marked, since the tracer captured it at the open. */
void shim_capture_fell_back(struct shim_call* c);

/* Releases the name locks `c` holds (name_lock.h). */
void shim_unlock_names(struct shim_call* c);

/* After the host's call: the OUTCOME of a recorded call, its parents closed. */
void shim_capture_after(struct shim_call* c, long rc, int err);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_H_ */
