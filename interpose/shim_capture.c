/* The capture hooks (shim_capture.h): the classification, from the
 * arguments alone, so that a call the shim does not capture costs a few
 * compares; and the lazy capture's bookkeeping (fd marks), whose capture
 * itself is the platform's (shim_platform_capture_fd). The pathname calls'
 * captures are the platform part's too (interpose/linux/capture.h). */
#include "interpose/shim_capture.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "interpose/fd_marks.h"
#include "interpose/shim_platform.h"
#include "interpose/shim_process.h"
#include "interpose/test_report.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

const char* shim_class_name(enum shim_class cls) {
  switch (cls) {
    case SHIM_NOTHING: return "nothing";
    case SHIM_CAPTURE_AT_OPEN: return "capture-at-open";
    case SHIM_CAPTURE_AT_WRITE: return "capture-at-first-write";
    case SHIM_CREATE_OR_AT_OPEN: return "create-or-capture-at-open";
    case SHIM_CREATE_OR_AT_WRITE: return "create-or-capture-at-first-write";
    case SHIM_CREATE: return "create";
    case SHIM_TMPFILE: return "tmpfile";
    case SHIM_DELETE: return "delete";
    case SHIM_RMDIR: return "rmdir";
    case SHIM_RENAME: return "rename";
    case SHIM_EXCHANGE: return "exchange";
    case SHIM_MKDIR: return "mkdir";
    case SHIM_MKNOD: return "mknod";
    case SHIM_SYMLINK: return "symlink";
    case SHIM_LINK: return "link";
    case SHIM_TRUNCATE: return "truncate";
    case SHIM_METADATA: return "metadata";
    case SHIM_FD_FIRST_CHANGE: return "first-change-capture";
    case SHIM_FD_NO_CAPTURE: return "change-nothing-pending";
    case SHIM_FD_UNKNOWN_CHANGE: return "change-unknown-fd-capture";
    case SHIM_EXEC: return "exec";
    case SHIM_PASS: return "pass";
  }
  return "?";
}

static void classified(struct shim_call* c, enum shim_class cls, const char* path, int fd) {
  c->cls = cls;
  c->fd = fd;
  shim_test_report(c->entry, shim_class_name(cls), path, fd);
}

void shim_before_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode) {
  (void)dirfd;
  (void)mode;
  int writes = (flags & O_ACCMODE) != O_RDONLY;
  enum shim_class cls;
  if ((flags & O_TMPFILE) == O_TMPFILE) {
    cls = SHIM_TMPFILE;
  } else if ((flags & O_CREAT) && (flags & O_EXCL)) {
    cls = SHIM_CREATE;
  } else if (flags & O_TRUNC) {
    /* O_RDONLY|O_TRUNC truncates too (Linux does it when permitted). */
    cls = (flags & O_CREAT) ? SHIM_CREATE_OR_AT_OPEN : SHIM_CAPTURE_AT_OPEN;
  } else if (flags & O_CREAT) {
    cls = writes ? SHIM_CREATE_OR_AT_WRITE : SHIM_CREATE;
  } else {
    cls = writes ? SHIM_CAPTURE_AT_WRITE : SHIM_NOTHING;
  }
  /* A lazily captured open marks its fd once the open succeeded, unless
   * the marks are not this process's (shim_process.h) or the shim will not
   * see the writes (a stdio stream): then the content is captured at the
   * open, as for O_TRUNC, and the fd is not marked. A read-only open
   * (SHIM_NOTHING) marks nothing, so it does not ask (whose the marks are
   * costs a getpid: the one system call the shim would add to it). */
  int marks = cls != SHIM_NOTHING && !shim_process_is_borrowed_by(c) && !c->writes_unseen;
  if (cls == SHIM_CAPTURE_AT_WRITE || cls == SHIM_CREATE_OR_AT_WRITE) {
    if (!marks) {
      cls = cls == SHIM_CAPTURE_AT_WRITE ? SHIM_CAPTURE_AT_OPEN : SHIM_CREATE_OR_AT_OPEN;
    } else {
      c->mark_result = SHIM_MARK_PENDING;
    }
  } else if (writes || cls != SHIM_NOTHING) {
    if (marks) c->mark_result = SHIM_MARK_CAPTURED;
  }
  classified(c, cls, path, -1);
}

void shim_before_temp(struct shim_call* c, const char* template_path, int is_dir) {
  classified(c, is_dir ? SHIM_MKDIR : SHIM_CREATE, template_path, -1);
}

void shim_before_delete(struct shim_call* c, int dirfd, const char* path, int at_flags) {
  (void)dirfd;
  classified(c, (at_flags & AT_REMOVEDIR) ? SHIM_RMDIR : SHIM_DELETE, path, -1);
}

void shim_before_rename(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd,
                        const char* newpath, unsigned flags) {
  (void)olddirfd;
  (void)newdirfd;
  (void)oldpath;
  classified(c, (flags & RENAME_EXCHANGE) ? SHIM_EXCHANGE : SHIM_RENAME, newpath, -1);
}

void shim_before_mkdir(struct shim_call* c, int dirfd, const char* path, mode_t mode) {
  (void)dirfd;
  (void)mode;
  classified(c, SHIM_MKDIR, path, -1);
}

void shim_before_mknod(struct shim_call* c, int dirfd, const char* path, mode_t mode) {
  (void)dirfd;
  (void)mode;
  classified(c, SHIM_MKNOD, path, -1);
}

void shim_before_symlink(struct shim_call* c, const char* target, int dirfd, const char* path) {
  (void)target;
  (void)dirfd;
  classified(c, SHIM_SYMLINK, path, -1);
}

void shim_before_link(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath) {
  (void)olddirfd;
  (void)oldpath;
  (void)newdirfd;
  classified(c, SHIM_LINK, newpath, -1);
}

void shim_before_truncate(struct shim_call* c, const char* path) { classified(c, SHIM_TRUNCATE, path, -1); }

/* The two names the kernel turns into mode bits (acl_mode in the tracer). */
static int is_acl_name(const char* name) {
  return name != NULL &&
         (strcmp(name, "system.posix_acl_access") == 0 || strcmp(name, "system.posix_acl_default") == 0);
}

void shim_before_metadata(struct shim_call* c, int dirfd, const char* path, int fd, const char* xattr_name) {
  (void)dirfd;
  enum shim_class cls = SHIM_METADATA;
  if (xattr_name != NULL && !is_acl_name(xattr_name)) cls = SHIM_NOTHING;
  classified(c, cls, path, fd);
}

/* Where a change through an fd goes once classified: a capture that failed
 * under the "block" policy fails the change; one the shim captured, or an
 * fd with nothing to capture, goes from the stub (ftruncate is the one the
 * filter would stop); an fd the shim never saw opened goes to the tracer. */
static void capture_first_change(struct shim_call* c, int fd) {
  int err = shim_platform_capture_fd(fd);
  if (err != 0) {
    c->route = SHIM_ROUTE_FAIL;
    c->fail_errno = err;
    /* The mark stays pending: the next change tries again. */
    if (c->claimed) shim_fd_unclaim(fd);
    c->claimed = 0;
    return;
  }
  if (shim_platform_capturing()) c->route = SHIM_ROUTE_STUB;
  if (c->claimed) shim_fd_captured(fd);
}

void shim_before_fd_change(struct shim_call* c, int fd, int known_writer) {
  enum shim_class cls = SHIM_FD_NO_CAPTURE;
  if (fd < 0) {  /* the call fails with EBADF by itself */
    c->cls = cls;
    c->fd = fd;
    return;
  }
  /* Only a pending fd asks whose the marks are: the hot path (a write on
   * an fd with nothing pending) makes no system call. */
  if (!shim_fd_is_pending(fd)) {
    /* nothing to capture by the marks */
  } else if (shim_process_is_borrowed_by(c)) {
    /* Capture without taking the mark: it is the parent's (shim_process.h). */
    cls = SHIM_FD_FIRST_CHANGE;
  } else if (shim_fd_claim(fd)) {
    c->claimed = 1;
    cls = SHIM_FD_FIRST_CHANGE;
  }
  if (cls == SHIM_FD_NO_CAPTURE && !known_writer && !shim_fd_is_known(fd)) cls = SHIM_FD_UNKNOWN_CHANGE;
  /* The hot path (write on an fd with nothing pending) stays silent even in
   * the test report: it is the one call every program makes all the time. */
  if (cls == SHIM_FD_NO_CAPTURE && known_writer) {
    c->cls = cls;
    c->fd = fd;
    return;
  }
  classified(c, cls, NULL, fd);
  if (cls == SHIM_FD_FIRST_CHANGE) {
    capture_first_change(c, fd);
  } else if (cls == SHIM_FD_NO_CAPTURE && shim_platform_capturing()) {
    /* Known, and captured at its open (or new): nothing to save. */
    c->route = SHIM_ROUTE_STUB;
  } else if (cls == SHIM_FD_UNKNOWN_CHANGE && shim_platform_alone()) {
    /* No tracer to leave it to (--mode preload): its content now, by fd. */
    capture_first_change(c, fd);
  }
  /* SHIM_FD_UNKNOWN_CHANGE keeps the real function: the tracer captures
   * an ftruncate by fd (fallocate is never stopped: an fd that no shim saw
   * opened was opened under the tracer, which captured it then). */
}

void shim_before_close(struct shim_call* c, int fd) {
  c->cls = SHIM_NOTHING;
  c->fd = fd;
  if (!shim_process_is_borrowed_by(c)) shim_fd_clear(fd);
}

void shim_before_dup(struct shim_call* c, int fd) {
  if (shim_fd_is_pending(fd)) {
    shim_before_fd_change(c, fd, 1);
  } else {
    c->cls = SHIM_NOTHING;
    c->fd = fd;
  }
}

void shim_before_exec(struct shim_call* c, const char* what, int with_cloexec) {
  (void)what;
  /* Pending fds that survive the exec are captured now: the new image's
   * shim starts with empty marks. A vfork child (or a raw clone's) reads its
   * parent's marks but execs its own fd table, a copy of the parent's:
   * what the marks say is pending there reaches the new image too (dash's
   * and Python's subprocess children are vfork children), so it is
   * captured as well, without taking the mark (shim_before_fd_change: the
   * parent captures again at its own first change; the supervisor keeps the
   * first pre-image). A number the child reopened since is captured for
   * nothing, never missed. */
  int limit = shim_fd_scan_limit();
  for (int fd = 0; fd < limit; ++fd) {
    if (!shim_fd_is_pending(fd) || (!with_cloexec && shim_platform_fd_cloexec(fd) == 1)) continue;
    struct shim_call inner = *c;
    inner.cls = SHIM_NOTHING;
    inner.fd = -1;
    inner.claimed = 0;
    inner.route = SHIM_ROUTE_REAL;
    shim_before_fd_change(&inner, fd, 1);
    if (inner.route == SHIM_ROUTE_FAIL) {
      /* Under "block" the exec fails rather than run a program that
       * would change the file unrecorded. */
      c->route = SHIM_ROUTE_FAIL;
      c->fail_errno = inner.fail_errno;
      return;
    }
  }
  classified(c, SHIM_EXEC, what, -1);
}

void shim_before_pass(struct shim_call* c, long nr) {
  (void)nr;
  c->cls = SHIM_PASS;
  c->fd = -1;
}

void shim_after(struct shim_call* c, long rc, int err) {
  (void)err;
  if ((c->mark_result == SHIM_MARK_CAPTURED || c->mark_result == SHIM_MARK_CREATED) && rc >= 0) {
    /* CREATED is made by the platform part once it has the new inode
     * (shim_capture_after); until then the fd is captured. */
    shim_fd_mark_captured((int)rc);
  } else if (c->mark_result == SHIM_MARK_PENDING && rc >= 0) {
    int fd = (int)rc;
    if (shim_fd_markable(fd)) {
      shim_fd_mark_pending(fd);
    } else {
      /* Beyond the table: capture now, before the host has the fd (nothing
       * can have written through it yet). A failure under "block" fails
       * the open (the platform part closes the fd). */
      shim_test_report(c->entry, shim_class_name(SHIM_FD_FIRST_CHANGE), NULL, fd);
      int e = shim_platform_capture_fd(fd);
      if (e != 0) {
        c->route = SHIM_ROUTE_FAIL;
        c->fail_errno = e;
      }
    }
  }
}
