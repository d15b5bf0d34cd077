/* The children the atfork handler does not reach (fork_calls.c). */
#ifndef GUARD_INTERPOSE_LINUX_FORK_CALLS_H_
#define GUARD_INTERPOSE_LINUX_FORK_CALLS_H_

/* Looks up libc's vfork, clone and _Fork (the constructor: a vfork child
 * should not be the first to ask dlsym). */
void shim_resolve_fork_family(void);

/* syscall(nr, ...) of a fork or clone number: the pid is no longer kept
 * (shim_process_pid_uncached), as for the libc entry points. */
void shim_fork_number(long nr);

#endif /* GUARD_INTERPOSE_LINUX_FORK_CALLS_H_ */
