#include "interpose/linux/reentered.h"

#include <fcntl.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/capture_alone.h"
#include "interpose/linux/capture_config.h"

static const char kInside[] = "inside the shim's own work (a signal handler), this ";

int shim_reentered_traced(const char* entry) {
  if (!shim_config.alone) return 0; /* the tracer's, as any call the shim leaves */
  return shim_miss_unseen(entry, kInside);
}

int shim_reentered_open(const char* entry, int flags) {
  if ((flags & O_PATH) || ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC)))) return 0;
  return shim_reentered_traced(entry);
}

int shim_reentered_fd_change(const char* entry, int fd) {
  /* A mark without a session (the shim loaded bare, in tests) keeps
   * nothing: the call goes on as it always did. */
  if (!shim_config.ready && !shim_config.alone) return 0;
  if (!shim_fd_is_pending(fd)) return 0;
  return shim_miss_unseen(entry, kInside);
}
