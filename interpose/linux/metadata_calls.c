/* The calls that change a file's metadata in ways undo restores: the chmod
 * and chown families (chown clears set-id bits) and setxattr, of which only
 * the two ACL names change the mode (the others are classified as nothing,
 * and still made from the stub: the filter would stop them only for the
 * tracer to let them go). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "interpose/linux/capture_acl.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/capture_owner.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(chmod);
SHIM_REAL_SLOT(fchmod);
SHIM_REAL_SLOT(fchmodat);
SHIM_REAL_SLOT(lchmod);
SHIM_REAL_SLOT(chown);
SHIM_REAL_SLOT(lchown);
SHIM_REAL_SLOT(fchown);
SHIM_REAL_SLOT(fchownat);
SHIM_REAL_SLOT(setxattr);
SHIM_REAL_SLOT(lsetxattr);
SHIM_REAL_SLOT(fsetxattr);

/* `capture` is the capture of the call (capture.h), or nothing: the
 * chown family records the chmod it amounts to when it clears set-id bits
 * and nothing else (capture.h), an ACL xattr is captured as the chmod it
 * amounts to (capture_acl.h); fchown goes from the
 * stub when it can change no mode guard keeps (capture_owner.h). */
#define SHIM_META_CALL(entry, dirfd, path, fd, xattr, capture, name, call_args, nr, ...)        \
  do {                                                                                           \
    struct shim_call c;                                                                          \
    if (!shim_begin(&c, entry)) {                                                                \
      SHIM_REENTERED(shim_reentered_traced(entry), -1);                                       \
      return (int)SHIM_REAL_OR_RAW(name, call_args, nr, __VA_ARGS__);                            \
    }                                                                                            \
    shim_before_metadata(&c, dirfd, path, fd, xattr);                                            \
    capture;                                                                                     \
    shim_proceed(&c);                                                                            \
    return (int)shim_finish(&c, SHIM_HOST(&c, name, call_args, nr, __VA_ARGS__));                \
  } while (0)

/* fchmodat with AT_SYMLINK_NOFOLLOW as glibc 2.36 makes it (its
 * sysdeps/unix/sysv/linux/fchmodat.c): an O_PATH open without following,
 * EOPNOTSUPP for a symlink, else a chmod of its /proc/thread-self/fd name. Made
 * here from the stub once the shim has recorded the call: glibc's own inner
 * calls would each be a stop for the tracer. */
static long chmod_nofollow(int dirfd, const char* path, mode_t mode) {
  long fd = shim_own_syscall(SYS_openat, dirfd, (long)path, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0);
  if (fd < 0) return fd;
  struct stat st;
  long rc = shim_own_syscall(SYS_newfstatat, fd, (long)"", (long)&st, AT_EMPTY_PATH, 0, 0);
  if (rc == 0 && S_ISLNK(st.st_mode)) rc = -EOPNOTSUPP;
  if (rc == 0) {
    char name[SHIM_FD_LINK_MAX];
    shim_fd_link((int)fd, name);
    rc = shim_own_syscall(SYS_chmod, (long)name, mode, 0, 0, 0, 0);
    if (rc == -ENOENT) rc = -EOPNOTSUPP;
  }
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  return rc;
}

/* fchmodat with AT_SYMLINK_NOFOLLOW and lchmod, which glibc makes in more
 * than one syscall: recorded by the shim as the chmod they are, then made
 * by chmod_nofollow from the stub; a call the shim leaves (another flag, a
 * path it cannot name) goes to glibc's own, whose inner calls the tracer
 * stops. */
#define SHIM_META_CALL_NOFOLLOW(entry, dirfd, path, mode, flags, name, call_args) \
  do {                                                                         \
    struct shim_call c;                                                        \
    __typeof__(&name) real_ = SHIM_REAL(name);                                 \
    if (real_ == NULL) {                                                       \
      errno = ENOSYS;                                                          \
      return -1;                                                               \
    }                                                                          \
    if (!shim_begin(&c, entry)) {                                              \
      SHIM_REENTERED(shim_reentered_traced(entry), -1);                     \
      return real_ call_args;                                                  \
    }                                                                          \
    shim_before_metadata(&c, dirfd, path, -1, NULL);                           \
    shim_capture_chmod(&c, dirfd, path, mode, flags);                          \
    shim_proceed(&c);                                                          \
    long rc_;                                                                  \
    if (c.route == SHIM_ROUTE_FAIL) {                                          \
      rc_ = shim_blocked(&c);                                                  \
    } else if (c.route == SHIM_ROUTE_STUB && flags == AT_SYMLINK_NOFOLLOW && shim_stub_ready()) { \
      rc_ = shim_errno_result(chmod_nofollow(dirfd, path, mode));              \
    } else {                                                                   \
      rc_ = real_ call_args;                                                   \
    }                                                                          \
    return (int)shim_finish(&c, rc_);                                          \
  } while (0)

SHIM_EXPORT int chmod(const char* path, mode_t mode) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("chmod", AT_FDCWD, path, -1, NULL, shim_capture_chmod(&c, AT_FDCWD, path, mode, 0), chmod,
                 (path, mode), SYS_chmod, (long)path, mode);
}

SHIM_EXPORT int fchmod(int fd, mode_t mode) {
  SHIM_META_CALL("fchmod", AT_FDCWD, NULL, fd, NULL, shim_capture_fchmod(&c, fd, mode), fchmod, (fd, mode), SYS_fchmod,
                 fd, mode);
}

SHIM_EXPORT int fchmodat(int dirfd, const char* path, mode_t mode, int flags) {
  SHIM_PATH_COPY(path);
  if (flags != 0) SHIM_META_CALL_NOFOLLOW("fchmodat", dirfd, path, mode, flags, fchmodat, (dirfd, path, mode, flags));
  SHIM_META_CALL("fchmodat", dirfd, path, -1, NULL, shim_capture_chmod(&c, dirfd, path, mode, 0), fchmodat,
                 (dirfd, path, mode, flags), SYS_fchmodat, dirfd, (long)path, mode);
}

SHIM_EXPORT int lchmod(const char* path, mode_t mode) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL_NOFOLLOW("lchmod", AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW, lchmod, (path, mode));
}

SHIM_EXPORT int chown(const char* path, uid_t owner, gid_t group) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("chown", AT_FDCWD, path, -1, NULL, shim_capture_chown(&c, AT_FDCWD, path, 0), chown, (path, owner, group), SYS_chown, (long)path, owner,
                 group);
}

SHIM_EXPORT int lchown(const char* path, uid_t owner, gid_t group) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("lchown", AT_FDCWD, path, -1, NULL, shim_capture_chown(&c, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW), lchown, (path, owner, group), SYS_lchown, (long)path,
                 owner, group);
}

SHIM_EXPORT int fchown(int fd, uid_t owner, gid_t group) {
  SHIM_META_CALL("fchown", AT_FDCWD, NULL, fd, NULL, shim_capture_fchown(&c, fd), fchown, (fd, owner, group), SYS_fchown,
                 fd, owner, group);
}

SHIM_EXPORT int fchownat(int dirfd, const char* path, uid_t owner, gid_t group, int flags) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("fchownat", dirfd, path, -1, NULL, shim_capture_chown(&c, dirfd, path, flags), fchownat, (dirfd, path, owner, group, flags), SYS_fchownat,
                 dirfd, (long)path, owner, group, flags);
}

SHIM_EXPORT int setxattr(const char* path, const char* name, const void* value, size_t size, int flags) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("setxattr", AT_FDCWD, path, -1, name, shim_capture_setacl(&c, path, 1, name, value, size), setxattr, (path, name, value, size, flags),
                 SYS_setxattr, (long)path, (long)name, (long)value, (long)size, flags);
}

SHIM_EXPORT int lsetxattr(const char* path, const char* name, const void* value, size_t size, int flags) {
  SHIM_PATH_COPY(path);
  SHIM_META_CALL("lsetxattr", AT_FDCWD, path, -1, name, shim_capture_setacl(&c, path, 0, name, value, size), lsetxattr, (path, name, value, size, flags),
                 SYS_lsetxattr, (long)path, (long)name, (long)value, (long)size, flags);
}

SHIM_EXPORT int fsetxattr(int fd, const char* name, const void* value, size_t size, int flags) {
  SHIM_META_CALL("fsetxattr", AT_FDCWD, NULL, fd, name, shim_capture_fsetacl(&c, fd, name, value, size), fsetxattr, (fd, name, value, size, flags),
                 SYS_fsetxattr, fd, (long)name, (long)value, (long)size, flags);
}
