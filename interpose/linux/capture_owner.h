/* fchown under the shim: a change guard records only when the kernel
 * clears set-id bits (supervisor/capture/capture.cc ModeChangeOf); any
 * other fchown changes nothing guard keeps. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_

#include <sys/types.h>

#include "interpose/shim_capture.h"

/* Routes fchown(fd) from the stub: unrecorded when it cannot change a
 * mode guard keeps (a file inside the root with no set-uid bit and no
 * set-gid bit with group execute, or a directory, whose set-id bits chown
 * leaves), recorded as the chmod it amounts to otherwise (capture.h,
 * shim_capture_fchmod). A file outside the root stays with the tracer. */
void shim_capture_fchown(struct shim_call* c, int fd);

/* Whether a chown of a file of mode `m` changes its mode: the kernel clears
 * set-uid, and set-gid with group execute, of any non-directory (and no
 * symlink has them), even when the owner stays the same. 1 with the mode
 * it leaves in *after; 0 when the owner alone changes. */
int shim_chown_clears(unsigned m, mode_t* after);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_ */
