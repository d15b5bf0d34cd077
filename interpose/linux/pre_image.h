/* Pre-images into the session's pending area (GUARD_SHIM_PENDING): a hard
 * link of the file itself where the call will remove its name (unlink, a
 * rename over it), a copy of its content where the call will change it in
 * place (O_TRUNC, truncate, the first write through a lazily captured fd).
 * Each gets a fresh name "<session>-s<pid>.<tid>.<image>.<n>", one component, which
 * the CALL record carries; the supervisor adopts it into the store. The
 * pending area is named by its absolute path (capture_config.h says why).
 * `c` is the call the pre-image is for: its pid and tid (shim_call_ids)
 * name the file. */
#ifndef GUARD_INTERPOSE_LINUX_PRE_IMAGE_H_
#define GUARD_INTERPOSE_LINUX_PRE_IMAGE_H_

#include <stddef.h>

#include "interpose/shim_capture.h"

/* Room for a pending name and its NUL. */
#define SHIM_PENDING_NAME_MAX 256

/* This image's part of the pending names; once, at the shim's start. */
void shim_pre_image_init(void);

/* Links `base` under `parent` into the pending area; the name into `name`.
 * Only a file nobody has open for writing is linked: a writer's later
 * writes through its fd would change the pre-image (the same inode), and
 * the tracer copies such a file instead. 0, or the errno of the failure
 * (a writer, or no lease to tell: EAGAIN, EACCES, EINVAL; EXDEV, EPERM,
 * EMLINK): the caller falls back to the tracer. */
int shim_pre_image_link(struct shim_call* c, int parent, const char* base, char* name, size_t* name_len);

/* Copies the content of `src` (open for reading, at any offset: copied from
 * 0) into a new pending file. 0, or the errno (the partial copy removed). */
int shim_pre_image_copy_fd(struct shim_call* c, int src, char* name, size_t* name_len);

/* Opens `base` under `parent` for reading (no symlink followed, no
 * blocking on a FIFO swapped in) and copies it. */
int shim_pre_image_copy_at(struct shim_call* c, int parent, const char* base, char* name, size_t* name_len);

/* Removes a pre-image that no record will name (the call fell back). */
void shim_pre_image_drop(const char* name);

#endif /* GUARD_INTERPOSE_LINUX_PRE_IMAGE_H_ */
