/* The first change through a lazily captured fd (shim_platform.h): the
 * content copied into the pending area through /proc/thread-self/fd (the same
 * inode, whatever became of its name), then a CALL "ftruncate" (a modify of
 * path1, whose pre-image is PENDING1) and its OUTCOME right away: the change
 * itself is a write, which no tracer sees, so there is nothing to fall back
 * to, and a failure follows the capture-failure policy. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "interpose/linux/capture_config.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/capture_record.h"
#include "interpose/linux/name_lock.h"
#include "interpose/linux/pre_image.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/linux/test_kill.h"
#include "interpose/shim_platform.h"

int shim_platform_capturing(void) { return shim_config.ready; }

int shim_platform_alone(void) { return shim_config.alone; }

/* The errno a blocked change fails with; 0 under "allow" (it runs
 * unrecorded). */
static int capture_failed(int err) {
  if (!shim_config.block_on_failure) return 0;
  return err == ENOSPC || err == EDQUOT ? ENOSPC : EIO;
}

/* The capture of `fd`, whose name is `path` (len bytes), under its name's
 * lock, recorded as call `c` (zeroed, its ids asked already). */
static int capture_named(int fd, const char* path, long len, struct shim_call* c);

int shim_platform_capture_fd(int fd) {
  if (!shim_config.ready) return 0;
  struct guard_shim_stat first;
  shim_path_fstat(fd, &first);
  /* Not open (the change fails by itself), or no longer a plain file. */
  if (first.err != 0 || (first.mode & S_IFMT) != S_IFREG) return 0;
  char path[PATH_MAX];
  long len = shim_fd_path(fd, path, sizeof path);
  if (len <= 0 || len > GUARD_SHIM_MAX_STRING) return capture_failed(ENAMETOOLONG);
  /* A name outside the root (" (deleted)" or a file of several names is
   * copied anyway: its text is what path1 says). */
  if (path[0] == '/' && !shim_path_in_root(path, (size_t)len)) return 0;
  /* Under the name's lock (name_lock.h): another process's first change
   * of the same file, captured meanwhile, would otherwise land between
   * this record's place in the ring and its reading of the content, and
   * the pre-image kept first would hold that process's bytes. */
  struct shim_call c;
  memset(&c, 0, sizeof c);
  shim_call_ids(&c);
  uint32_t lock = shim_name_lock_index(path, (size_t)len);
  int locked = shim_name_locks_usable(c.pid) && shim_name_lock_take(lock, UINT32_MAX, c.tid) >= 0;
  int rc = capture_named(fd, path, len, &c);
  if (locked) shim_name_lock_give(lock, c.tid);
  return rc;
}

static int capture_named(int fd, const char* path, long len, struct shim_call* c) {
  /* Looked at again under the lock: what it holds now is the pre-image. */
  struct guard_shim_stat before;
  shim_path_fstat(fd, &before);
  if (before.err != 0 || (before.mode & S_IFMT) != S_IFREG) return 0;
  char link[SHIM_FD_LINK_MAX];
  shim_fd_link(fd, link);
  long src = shim_own_syscall(SYS_openat, AT_FDCWD, (long)link, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0, 0, 0);
  if (src < 0) return capture_failed((int)-src);
  char name[SHIM_PENDING_NAME_MAX];
  size_t name_len = 0;
  struct shim_strings s = {{0}, {0}};
  /* Small: read into the CALL itself (pre_image.h); else copied now. */
  int err = shim_pre_image_keep_fd(c, (int)src, before.size, &s, name, &name_len);
  if (err != 0) {
    shim_own_syscall(SYS_close, src, 0, 0, 0, 0, 0);
    return capture_failed(err);
  }
  s.s[GUARD_SHIM_STR_PATH1] = path;
  s.n[GUARD_SHIM_STR_PATH1] = (size_t)len;
  s.s[GUARD_SHIM_STR_PENDING1] = name;
  s.n[GUARD_SHIM_STR_PENDING1] = name_len;
  shim_test_kill_point(c, SHIM_KILL_PRE_IMAGE);
  int rc = shim_record_call(c, GUARD_SHIM_FTRUNCATE, 0, 0, &before, NULL, &s);
  shim_own_syscall(SYS_close, src, 0, 0, 0, 0, 0);
  if (rc != 0) {
    if (name_len != 0) shim_pre_image_drop(name);
    return capture_failed(c->spill_errno != 0 ? c->spill_errno : EIO);
  }
  shim_test_kill_point(c, SHIM_KILL_CALL); /* the OUTCOME follows at once: the change is after both */
  struct guard_shim_stat after;
  shim_path_fstat(fd, &after);
  shim_record_outcome(c, 0, 0, &after);
  return 0;
}
