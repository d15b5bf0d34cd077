/* The calls that change a name: rename, unlink, rmdir, mkdir, link,
 * symlink, mknod and mkfifo, truncate by path. Each copies its paths first
 * (SHIM_PATH_COPY, capture_path.h), is classified and captured (capture.h),
 * then made from the stub as the syscall it is, or left to the tracer
 * through the real function, on the copies. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/shim_record.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/interposer.h"

SHIM_REAL_SLOT(rename);
SHIM_REAL_SLOT(renameat);
SHIM_REAL_SLOT(renameat2);
SHIM_REAL_SLOT(unlink);
SHIM_REAL_SLOT(unlinkat);
SHIM_REAL_SLOT(remove);
SHIM_REAL_SLOT(rmdir);
SHIM_REAL_SLOT(mkdir);
SHIM_REAL_SLOT(mkdirat);
SHIM_REAL_SLOT(link);
SHIM_REAL_SLOT(linkat);
SHIM_REAL_SLOT(symlink);
SHIM_REAL_SLOT(symlinkat);
SHIM_REAL_SLOT(mknodat);
SHIM_REAL_SLOT(truncate);

/* One pathname call: `before` is the classification, `capture` the
 * capture (capture.h), then the host's call by its route. A macro so that
 * each entry point keeps its own real function and types. */
#define SHIM_PATH_CALL(entry, before, capture, name, call_args, nr, ...)                       \
  do {                                                                                          \
    struct shim_call c;                                                                         \
    if (!shim_begin(&c, entry)) {                                                               \
      SHIM_REENTERED(shim_reentered_traced(entry), -1);                                      \
      return (int)SHIM_REAL_OR_RAW(name, call_args, nr, __VA_ARGS__);                           \
    }                                                                                           \
    before;                                                                                     \
    capture;                                                                                    \
    shim_proceed(&c);                                                                           \
    return (int)shim_finish(&c, SHIM_HOST(&c, name, call_args, nr, __VA_ARGS__));               \
  } while (0)

SHIM_EXPORT int rename(const char* oldpath, const char* newpath) {
  SHIM_PATH_COPY(oldpath);
  SHIM_PATH_COPY(newpath);
  SHIM_PATH_CALL("rename", shim_before_rename(&c, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0),
                 shim_capture_rename(&c, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0), rename, (oldpath, newpath),
                 SYS_rename, (long)oldpath, (long)newpath);
}

SHIM_EXPORT int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath) {
  SHIM_PATH_COPY(oldpath);
  SHIM_PATH_COPY(newpath);
  SHIM_PATH_CALL("renameat", shim_before_rename(&c, olddirfd, oldpath, newdirfd, newpath, 0),
                 shim_capture_rename(&c, olddirfd, oldpath, newdirfd, newpath, 0), renameat,
                 (olddirfd, oldpath, newdirfd, newpath), SYS_renameat, olddirfd, (long)oldpath, newdirfd,
                 (long)newpath);
}

SHIM_EXPORT int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, unsigned int flags) {
  SHIM_PATH_COPY(oldpath);
  SHIM_PATH_COPY(newpath);
  SHIM_PATH_CALL("renameat2", shim_before_rename(&c, olddirfd, oldpath, newdirfd, newpath, flags),
                 shim_capture_rename(&c, olddirfd, oldpath, newdirfd, newpath, flags), renameat2,
                 (olddirfd, oldpath, newdirfd, newpath, flags), SYS_renameat2, olddirfd, (long)oldpath, newdirfd,
                 (long)newpath, flags);
}

SHIM_EXPORT int unlink(const char* path) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("unlink", shim_before_delete(&c, AT_FDCWD, path, 0), shim_capture_delete(&c, AT_FDCWD, path, 0, 0),
                 unlink, (path), SYS_unlink, (long)path);
}

SHIM_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("unlinkat", shim_before_delete(&c, dirfd, path, flags), shim_capture_delete(&c, dirfd, path, flags, 0),
                 unlinkat, (dirfd, path, flags), SYS_unlinkat, dirfd, (long)path, flags);
}

SHIM_EXPORT int rmdir(const char* path) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("rmdir", shim_before_delete(&c, AT_FDCWD, path, AT_REMOVEDIR),
                 shim_capture_delete(&c, AT_FDCWD, path, AT_REMOVEDIR, 0), rmdir, (path), SYS_rmdir, (long)path);
}

/* remove is glibc's unlink, then rmdir when the name is a directory (its
 * internal __unlink and __rmdir, which no preload reaches): the same here,
 * from the stub. */
SHIM_EXPORT int remove(const char* path) {
  SHIM_PATH_COPY(path);
  struct shim_call c;
  if (!shim_begin(&c, "remove")) {
    SHIM_REENTERED(shim_reentered_traced("remove"), -1);
    return (int)SHIM_REAL_OR_RAW(remove, (path), SYS_unlink, (long)path);
  }
  shim_before_delete(&c, AT_FDCWD, path, 0);
  shim_capture_delete(&c, AT_FDCWD, path, 0, 1);
  shim_proceed(&c);
  long rc;
  if (c.route == SHIM_ROUTE_FAIL) {
    rc = shim_blocked(&c);
  } else if (c.route != SHIM_ROUTE_STUB || !shim_stub_ready()) {
    rc = SHIM_REAL_OR_RAW(remove, (path), SYS_unlink, (long)path);
  } else {
    rc = shim_stub_syscall(SYS_unlink, (long)path, 0, 0, 0, 0, 0);
    if (rc == -EISDIR) rc = shim_stub_syscall(SYS_rmdir, (long)path, 0, 0, 0, 0, 0);
    rc = shim_errno_result(rc);
  }
  return (int)shim_finish(&c, rc);
}

SHIM_EXPORT int mkdir(const char* path, mode_t mode) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("mkdir", shim_before_mkdir(&c, AT_FDCWD, path, mode),
                 shim_capture_create(&c, GUARD_SHIM_MKDIR, AT_FDCWD, path, mode, NULL), mkdir, (path, mode), SYS_mkdir,
                 (long)path, mode);
}

SHIM_EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("mkdirat", shim_before_mkdir(&c, dirfd, path, mode),
                 shim_capture_create(&c, GUARD_SHIM_MKDIR, dirfd, path, mode, NULL), mkdirat, (dirfd, path, mode),
                 SYS_mkdirat, dirfd, (long)path, mode);
}

SHIM_EXPORT int link(const char* oldpath, const char* newpath) {
  SHIM_PATH_COPY(oldpath);
  SHIM_PATH_COPY(newpath);
  SHIM_PATH_CALL("link", shim_before_link(&c, AT_FDCWD, oldpath, AT_FDCWD, newpath),
                 shim_capture_link(&c, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0), link, (oldpath, newpath), SYS_link,
                 (long)oldpath, (long)newpath);
}

SHIM_EXPORT int linkat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath, int flags) {
  SHIM_PATH_COPY(oldpath);
  SHIM_PATH_COPY(newpath);
  SHIM_PATH_CALL("linkat", shim_before_link(&c, olddirfd, oldpath, newdirfd, newpath),
                 shim_capture_link(&c, olddirfd, oldpath, newdirfd, newpath, flags), linkat,
                 (olddirfd, oldpath, newdirfd, newpath, flags), SYS_linkat, olddirfd, (long)oldpath, newdirfd,
                 (long)newpath, flags);
}

SHIM_EXPORT int symlink(const char* target, const char* path) {
  SHIM_PATH_COPY(target);
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("symlink", shim_before_symlink(&c, target, AT_FDCWD, path),
                 shim_capture_create(&c, GUARD_SHIM_SYMLINK, AT_FDCWD, path, 0, target), symlink, (target, path),
                 SYS_symlink, (long)target, (long)path);
}

SHIM_EXPORT int symlinkat(const char* target, int dirfd, const char* path) {
  SHIM_PATH_COPY(target);
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL("symlinkat", shim_before_symlink(&c, target, dirfd, path),
                 shim_capture_create(&c, GUARD_SHIM_SYMLINK, dirfd, path, 0, target), symlinkat, (target, dirfd, path),
                 SYS_symlinkat, (long)target, dirfd, (long)path);
}

/* mknod and mkfifo are glibc's mknodat underneath (mkfifo through the
 * internal __mknodat): all four go to mknodat. */
static int mknod_at(const char* entry, int dirfd, const char* path, mode_t mode, dev_t dev) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL(entry, shim_before_mknod(&c, dirfd, path, mode),
                 shim_capture_create(&c, GUARD_SHIM_MKNOD, dirfd, path, mode, NULL), mknodat, (dirfd, path, mode, dev),
                 SYS_mknodat, dirfd, (long)path, mode, (long)dev);
}

SHIM_EXPORT int mknod(const char* path, mode_t mode, dev_t dev) { return mknod_at("mknod", AT_FDCWD, path, mode, dev); }
SHIM_EXPORT int mknodat(int dirfd, const char* path, mode_t mode, dev_t dev) {
  return mknod_at("mknodat", dirfd, path, mode, dev);
}
SHIM_EXPORT int mkfifo(const char* path, mode_t mode) { return mknod_at("mkfifo", AT_FDCWD, path, mode | S_IFIFO, 0); }
SHIM_EXPORT int mkfifoat(int dirfd, const char* path, mode_t mode) {
  return mknod_at("mkfifoat", dirfd, path, mode | S_IFIFO, 0);
}

static int truncate_path(const char* entry, const char* path, off_t length) {
  SHIM_PATH_COPY(path);
  SHIM_PATH_CALL(entry, shim_before_truncate(&c, path), shim_capture_truncate(&c, path), truncate, (path, length),
                 SYS_truncate, (long)path, (long)length);
}

SHIM_EXPORT int truncate(const char* path, off_t length) { return truncate_path("truncate", path, length); }
SHIM_EXPORT int truncate64(const char* path, off_t length) { return truncate_path("truncate64", path, length); }
