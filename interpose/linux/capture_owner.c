#include "interpose/linux/capture_owner.h"

#include <limits.h>
#include <sys/stat.h>

#include "interpose/linux/capture.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/capture_path.h"

int shim_chown_clears(unsigned m, mode_t* after) {
  if (S_ISDIR(m) || S_ISLNK(m) || !((m & S_ISUID) || ((m & S_ISGID) && (m & S_IXGRP)))) return 0;
  *after = (mode_t)(m & 07777 & ~(unsigned)S_ISUID & ~((m & S_IXGRP) ? (unsigned)S_ISGID : 0u));
  return 1;
}

void shim_capture_fchown(struct shim_call* c, int fd) {
  if (!shim_config.ready || fd < 0) return;
  if (shim_fd_created_here(fd)) { /* no past: not even a set-id bit to clear */
    c->route = SHIM_ROUTE_STUB;
    return;
  }
  struct guard_shim_stat st;
  shim_path_fstat(fd, &st);
  if (st.err != 0) return;
  mode_t after;
  if (shim_chown_clears(st.mode, &after)) {
    shim_capture_fchmod(c, fd, after); /* recorded as the chmod it amounts to */
    return;
  }
  char path[PATH_MAX];
  long len = shim_fd_path(fd, path, sizeof path);
  /* A pipe, a socket, an anonymous inode; guard's own state; anything
   * outside the root (it may be another name of guard's state): the
   * tracer's, which refuses or lets it go. */
  if (len <= 0 || path[0] != '/') return;
  if (shim_path_forbidden(path, (size_t)len) || !shim_path_in_root(path, (size_t)len)) return;
  c->route = SHIM_ROUTE_STUB;
}
