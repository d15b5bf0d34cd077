/* The one open every entry point of the open family lands in (open,
 * openat, creat, the fortified forms), and that fopen, freopen and the
 * mkstemp family reuse for the open glibc would otherwise make through its
 * internal __open, which no preload reaches: classified, captured (or left
 * to the tracer), then one openat from the stub or through the real
 * function (docs/shim.md). */
#ifndef GUARD_INTERPOSE_LINUX_OPEN_CALL_H_
#define GUARD_INTERPOSE_LINUX_OPEN_CALL_H_

#include <sys/types.h>

/* `entry` names the host's symbol in the test report. `writes_unseen`:
 * the fd's writes will not come through the shim (a stdio stream), so a
 * write access without O_TRUNC is captured at the open and the fd is left
 * unmarked (struct shim_call). The fd, or -1 with errno. */
int shim_open_call(const char* entry, int dirfd, const char* path, int flags, mode_t mode, int writes_unseen);

#endif /* GUARD_INTERPOSE_LINUX_OPEN_CALL_H_ */
