/* The shim's way to the kernel (common/syscall_stub_abi.h): the syscall
 * stub, mapped once at its fixed address, from which the seccomp filter
 * lets calls through unstopped. The shim makes from it the host's calls it
 * has captured and its own; every other call of the host goes where it
 * would have gone without the shim. */
#ifndef GUARD_INTERPOSE_LINUX_SYSCALL_STUB_H_
#define GUARD_INTERPOSE_LINUX_SYSCALL_STUB_H_

/* Maps the stub (the constructor). Returns 0, or the errno of the failure:
 * then shim_stub_ready() stays 0 and the shim's calls go through the real
 * functions, where the tracer stops them (slower, never lost). */
int shim_stub_map(void);

/* 1 once the stub is mapped. Acquire: the page's contents are visible. */
int shim_stub_ready(void);

/* The stub is not used again in this image: shim_stub_ready() stays 0, and
 * the shim's calls go from its own text, where a filter of guard's, if
 * there is one, stops them (the handshake found no tracer to answer:
 * shim_hello.h). */
void shim_stub_leave(void);

/* A call from the stub; the kernel's raw result (-errno on failure).
 * Only when shim_stub_ready(). */
long shim_stub_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* A call from the shim's own text: the tracer stops it like any other. For
 * when the stub is not mapped and the real function cannot be had. */
long shim_raw_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* The shim's own calls: from the stub when mapped, raw otherwise. */
long shim_own_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6);

/* -1 with errno set for a raw result in [-4095, -1], the result otherwise. */
long shim_errno_result(long raw);

#endif /* GUARD_INTERPOSE_LINUX_SYSCALL_STUB_H_ */
