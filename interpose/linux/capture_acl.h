/* The setxattr family of the two ACL names (docs/capture.md, "What is
 * stopped"): an access ACL sets the file's permission bits, so it is
 * captured as the chmod it amounts to (the supervisor records it so for the
 * tracer too: acl_mode.h); a default ACL changes nothing undo restores and
 * goes from the stub unrecorded. A value the shim cannot read is left to
 * the tracer. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_ACL_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_ACL_H_

#include <stddef.h>

#include "interpose/shim_capture.h"

/* setxattr (follow 1) and lsetxattr (follow 0). */
void shim_capture_setacl(struct shim_call* c, const char* path, int follow, const char* name, const void* value,
                         size_t size);
void shim_capture_fsetacl(struct shim_call* c, int fd, const char* name, const void* value, size_t size);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_ACL_H_ */
