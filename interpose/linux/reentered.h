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
 *     metadata by path, or an open that may change or make a file;
 *   - in every mode, a change through an fd whose first-change capture is
 *     pending (fd_marks.h): the filter stops no write.
 * Each returns 0 to let the call go to the real function, or the errno to
 * fail it with (docs/shim.md, "Signal handlers"). */
#ifndef GUARD_INTERPOSE_LINUX_REENTERED_H_
#define GUARD_INTERPOSE_LINUX_REENTERED_H_

/* A call the filter stops (rename, unlink, mkdir, link, symlink, truncate,
 * ftruncate, the chmod and chown families, setxattr, mkdtemp's mkdir):
 * the tracer's, but under --mode preload. */
int shim_reentered_traced(const char* entry);
/* An open (or fopen) with these flags: only one that may write or create. */
int shim_reentered_open(const char* entry, int flags);
/* A change through `fd`, whose mark is pending. */
int shim_reentered_fd_change(const char* entry, int fd);

#endif /* GUARD_INTERPOSE_LINUX_REENTERED_H_ */
