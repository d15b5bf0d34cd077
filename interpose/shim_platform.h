/* What the shim's shared part (the .c files of interpose/) needs from its platform part
 * (interpose/linux/, and one day interpose/darwin/). The shared part makes
 * no system call of its own except through these, and none of them
 * allocates, blocks on a lock or touches errno. */
#ifndef GUARD_INTERPOSE_SHIM_PLATFORM_H_
#define GUARD_INTERPOSE_SHIM_PLATFORM_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes all of `len` bytes to `fd` (retrying EINTR and short writes);
 * returns 0, or -1 if the fd refused them. */
int shim_platform_write_all(int fd, const void* buf, size_t len);

/* The calling process's id, asked of the kernel (not a cached value): a
 * vfork child sees its own. */
int shim_platform_getpid(void);

/* Sends `sig` to the calling thread. */
void shim_platform_raise(int sig);

/* Gives up the processor once (a waiting thread's spin). */
void shim_platform_yield(void);

/* Whether `fd` is close-on-exec (1), not (0), or not open (-1). */
int shim_platform_fd_cloexec(int fd);

/* 1 once the capture is configured (a ring and a pending area: guard
 * set them up); 0 while every call goes to the tracer. */
int shim_platform_capturing(void);

/* 1 when no tracer stands behind the shim (--mode preload): a change
 * through an fd it never saw opened is then captured by the fd here. */
int shim_platform_alone(void);

/* The first change through `fd`, a file opened for writing whose content
 * is not captured yet: its content copied into the pending area and
 * recorded before the change proceeds. Returns 0 (captured, or nothing to
 * capture), or the errno the change must fail with (the capture failed and
 * the capture-failure policy is "block"). */
int shim_platform_capture_fd(int fd);

#ifdef __cplusplus
}
#endif

#endif /* GUARD_INTERPOSE_SHIM_PLATFORM_H_ */
