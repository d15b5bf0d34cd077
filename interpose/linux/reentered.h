/* Calls made while this thread is inside the shim's own work for another
 * call (reentry.h): a signal handler that interrupted it. The shim cannot
 * capture them (the interrupted call's capture is half made: a claimed
 * ring slot, a name lock, a mark being captured), so they go to the real
 * function. Under --mode auto and trace the tracer stops what the filter
 * traps and captures it as any other call. What nothing would record
 * follows the capture-failure policy instead of running unseen
 * (shim_miss_unseen: EPERM and one line under "block", the line alone
 * under "allow"):
 *   - under --mode preload (no tracer), a call that changes a name or
 *     metadata by path, an open that may change or make a file (not one of
 *     a device, a FIFO or a socket), a change through an fd the shim never
 *     saw opened;
 *   - in every mode, a change through an fd whose first-change capture is
 *     pending (fd_marks.h), when it still names a regular file: the filter
 *     stops no write.
 * Each returns 0 to let the call go to the real function, or the errno to
 * fail it with (docs/shim.md, "Signal handlers"). */
#ifndef GUARD_INTERPOSE_LINUX_REENTERED_H_
#define GUARD_INTERPOSE_LINUX_REENTERED_H_

/* A call the filter stops (rename, unlink, mkdir, link, symlink, truncate,
 * ftruncate, the chmod and chown families, setxattr, mkdtemp's mkdir):
 * the tracer's, but under --mode preload. */
int shim_reentered_traced(const char* entry);
/* An open (or fopen) of `path` from `dirfd` with these flags: only one
 * that may write or create, and not of a device, FIFO or socket. */
int shim_reentered_open(const char* entry, int dirfd, const char* path, int flags);
/* A change through `fd` (`known_writer`: a write, which the shim classifies
 * only on a pending fd): through a pending fd, or alone through one the
 * shim never saw opened; only of a regular file. */
int shim_reentered_fd_change(const char* entry, int fd, int known_writer);

#endif /* GUARD_INTERPOSE_LINUX_REENTERED_H_ */
