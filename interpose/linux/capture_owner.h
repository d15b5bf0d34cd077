/* fchown under the shim: a change guard records only when the kernel
 * clears set-id bits (supervisor/capture/capture.cc ModeChangeOf); any
 * other fchown changes nothing guard keeps. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_

#include "interpose/shim_capture.h"

/* Routes fchown(fd) from the stub: unrecorded when it cannot change a
 * mode guard keeps (a file inside the root with no set-uid bit and no
 * set-gid bit with group execute, or a directory, whose set-id bits chown
 * leaves), recorded as the chmod it amounts to otherwise (capture.h,
 * shim_capture_fchmod). A file outside the root stays with the tracer. */
void shim_capture_fchown(struct shim_call* c, int fd);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_OWNER_H_ */
