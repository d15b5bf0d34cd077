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

#include "interpose/linux/capture_record.h"
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

/* Where a regular file's content before a change in place goes: inside
 * the CALL when it is small (GUARD_SHIM_INLINE_MAX, and a sixteenth of the
 * ring at most), else a copy in the pending area. `size` is the file's
 * size by its lstat. Small: opens `base` under `parent` into s (has_inline;
 * `name` is where a file found to be of another size spills, see
 * shim_strings), *name_len 0. Else the copy, its name in `name`. 0 or the
 * errno. shim_pre_image_keep_done closes what this opened. */
int shim_pre_image_keep_at(struct shim_call* c, int parent, const char* base, uint64_t size, struct shim_strings* s,
                           char* name, size_t* name_len);
/* The same for a file open as `fd` (borrowed: not closed). */
int shim_pre_image_keep_fd(struct shim_call* c, int fd, uint64_t size, struct shim_strings* s, char* name,
                           size_t* name_len);
void shim_pre_image_keep_done(struct shim_strings* s);

/* Reading an inline pre-image into the ring (guard_ring_fill's fn): fills
 * `to` from offset 0 of src->fd, and returns src->size only if the file
 * held exactly that many bytes (room is size + 1, so that one more byte
 * tells a file that grew); else -ESTALE, or the read's errno, with
 * src->err set. */
struct shim_inline_source {
  int fd;
  uint64_t size;
  int err;
};
long shim_pre_image_fill(void* arg, unsigned char* to, uint32_t room);

/* Removes a pre-image that no record will name (the call fell back). */
void shim_pre_image_drop(const char* name);

#endif /* GUARD_INTERPOSE_LINUX_PRE_IMAGE_H_ */
