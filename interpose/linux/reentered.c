#include "interpose/linux/reentered.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/capture_alone.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/syscall_stub.h"

static const char kInside[] = "inside the shim's own work (a signal handler), this ";

/* Whether a stat (its result `rc`) found something that holds nothing
 * guard keeps: a device, a FIFO, a socket. A file, a directory, a symlink,
 * or no name yet (a creation) all count. */
static int holds_nothing(long rc, const struct stat* st) {
  return rc == 0 && !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode);
}

int shim_reentered_traced(const char* entry) {
  if (!shim_config.alone) return 0; /* the tracer's, as any call the shim leaves */
  return shim_miss_unseen(entry, kInside);
}

int shim_reentered_open(const char* entry, int dirfd, const char* path, int flags) {
  if ((flags & O_PATH) || ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC)))) return 0;
  if (!shim_config.alone) return 0;
  /* `> /dev/null`, a terminal, a FIFO: no file's content, as the shim's
   * own capture has it (capture.c). The open follows a final symlink unless
   * O_NOFOLLOW, and so does this look. */
  struct stat st;
  long rc = path == NULL ? -1
                         : shim_own_syscall(SYS_newfstatat, dirfd, (long)path, (long)&st,
                                            (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0, 0, 0);
  if (holds_nothing(rc, &st)) return 0;
  return shim_miss_unseen(entry, kInside);
}

int shim_reentered_fd_change(const char* entry, int fd, int known_writer) {
  /* A mark without a session (the shim loaded bare, in tests) keeps
   * nothing: the call goes on as it always did. */
  if (!shim_config.ready && !shim_config.alone) return 0;
  /* A pending mark: nothing but the shim would save the file first. Alone,
   * an fd the shim never saw opened is captured by the fd outside a
   * handler (a change that is not a write: known_writer 0). */
  int unseen = shim_fd_is_pending(fd) || (shim_config.alone && !known_writer && !shim_fd_is_known(fd));
  if (!unseen) return 0;
  /* A mark can outlive its fd (closed by close_range, or a raw close) and
   * the number name a pipe or socket now (a handler's self-pipe): only a
   * regular file has content to keep. */
  struct stat st;
  long rc = shim_own_syscall(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
  if (rc != 0 || !S_ISREG(st.st_mode)) return 0;
  return shim_miss_unseen(entry, kInside);
}
