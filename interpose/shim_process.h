/* Which process the shim's per-process state (fd_marks.h) belongs to.
 *
 * A vfork child (Bun's, posix_spawn's) runs in its parent's memory until it
 * execs: the fd marks it sees are its parent's, but its fd table is its own.
 * So a process whose pid is not the owner's (a vfork child, or a child of a
 * raw clone that ran no atfork handler) leaves the marks alone: it captures
 * at the open what it would otherwise capture at the first write, and a
 * change through an fd its parent marked captures without clearing the
 * mark (the parent captures again at its own first change; the supervisor
 * keeps the first pre-image of a file). */
#ifndef GUARD_INTERPOSE_SHIM_PROCESS_H_
#define GUARD_INTERPOSE_SHIM_PROCESS_H_

/* Makes the calling process the owner (the constructor, fork's child),
 * and keeps its pid (shim_process_pid). */
void shim_process_adopt(void);

/* The calling process's pid: the one kept at adopt, else the kernel's. */
int shim_process_pid(void);

/* Stops keeping the pid, for good in this image: called before a child
 * that shares this memory, or that runs no atfork handler, can run
 * (interpose/linux/fork_calls.c). */
void shim_process_pid_uncached(void);

/* 1 if the caller is not the owner: the marks are not its to change. */
int shim_process_is_borrowed(void);

struct shim_call;
/* The same for the process making `c`, by the pid `c` holds (asked once
 * per call: shim_call_pid). */
int shim_process_is_borrowed_by(struct shim_call* c);

/* The pid of the process making `c` (shim_process_pid), at the call's
 * first need, kept in c for the rest of the call. */
int shim_call_pid(struct shim_call* c);

#endif /* GUARD_INTERPOSE_SHIM_PROCESS_H_ */
