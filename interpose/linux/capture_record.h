/* The records of common/shim_record.h, put into the ring. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_RECORD_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_RECORD_H_

#include <stddef.h>
#include <stdint.h>

#include "common/shim_record.h"
#include "interpose/shim_capture.h"

/* The strings of a CALL (NULL or length 0: empty). GUARD_SHIM_STR_COMM is
 * the record's own: shim_record_call fills it (process_name.h). */
struct shim_strings {
  const char* s[GUARD_SHIM_STR_COUNT];
  size_t n[GUARD_SHIM_STR_COUNT];
  /* Path1's content goes inside the CALL (has_inline): read from
   * inline_fd, which must hold inline_size bytes (path1's lstat), straight
   * into the ring (pre_image.h, shim_pre_image_keep_at). A file found to
   * hold another size is copied into the pending area instead, under a
   * name written to spill_name (SHIM_PENDING_NAME_MAX bytes), which then
   * is the CALL's PENDING1. */
  int has_inline;
  int inline_fd;
  int inline_fd_owned; /* opened by shim_pre_image_keep_at, closed by shim_pre_image_keep_done */
  uint64_t inline_size;
  char* spill_name;
};

/* The caller's pid and tid into c->pid and c->tid at the call's first need
 * (a pending name, the CALL), kept for the rest of it: from shim_begin to
 * shim_finish a call runs in one thread of one process. The pid is asked of
 * the kernel; the tid too, unless this thread asked it under the same pid
 * before. */
void shim_call_ids(struct shim_call* c);

/* Forgets the thread's kept tid: a fork child's (shim_init.c's atfork
 * handler), whose pid a later process may have again. */
void shim_call_ids_forget(void);

/* Puts the CALL of `c` (action, flags and mode into it; call_id assigned,
 * and the ids if not yet). 0 once published (c->recorded set), or a negative errno: the
 * record is not in the ring, and the call must not run from the stub. */
int shim_record_call(struct shim_call* c, uint32_t action, uint64_t flags, uint32_t mode,
                     const struct guard_shim_stat* before1, const struct guard_shim_stat* before2,
                     const struct shim_strings* strings);

/* Puts the OUTCOME of a recorded call. */
void shim_record_outcome(const struct shim_call* c, long rc, int err, const struct guard_shim_stat* after);

/* An unmade stat (err = -1), and an absent one (ENOENT). */
void shim_stat_unmade(struct guard_shim_stat* st);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_RECORD_H_ */
