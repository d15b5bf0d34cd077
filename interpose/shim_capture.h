/* The capture hooks: what an interposed call must have in the undo log
 * before it proceeds, decided from the call alone (no system call), by the
 * shim's shared part. The platform part (interpose/linux/) calls one
 * shim_before_<kind> before the host's call and shim_after once it returned.
 *
 * The classes say where a capture belongs; the capture of the pathname
 * calls is the platform part's (interpose/linux/capture.h), that of a first
 * change through an fd is shim_platform_capture_fd's:
 *  - delete, rename over a name: one link of the victim into the session's
 *    pending area;
 *  - creation (O_CREAT on an absent name, mkdir, mknod, symlink, link): a
 *    record alone, no content;
 *  - open for writing with O_TRUNC, truncate by path: the content at the open;
 *  - open for writing without O_TRUNC: nothing at the open; the fd is marked
 *    (fd_marks.h) and the content is captured at its first write, pwrite,
 *    writev, ftruncate, fallocate, copy_file_range or shared mmap;
 *  - chmod: a record of the new mode; chown and xattrs are the tracer's.
 * A call the hooks cannot classify from its arguments is left to the tracer. */
#ifndef GUARD_INTERPOSE_SHIM_CAPTURE_H_
#define GUARD_INTERPOSE_SHIM_CAPTURE_H_

#include <stdint.h>
#include <sys/types.h>

enum shim_class {
  SHIM_NOTHING,              /* changes no file: a read-only open, an xattr that is no ACL */
  SHIM_CAPTURE_AT_OPEN,      /* O_TRUNC with write access: content before the open */
  SHIM_CAPTURE_AT_WRITE,     /* write access, no O_TRUNC: mark the fd, capture at the first change */
  SHIM_CREATE_OR_AT_OPEN,    /* O_CREAT|O_TRUNC: a record if new, else content before the open */
  SHIM_CREATE_OR_AT_WRITE,   /* O_CREAT, no O_TRUNC or O_EXCL: a record if new, else as AT_WRITE */
  SHIM_CREATE,               /* O_CREAT|O_EXCL, a temporary file: a record alone */
  SHIM_TMPFILE,              /* O_TMPFILE: nothing until linked by name */
  SHIM_DELETE,               /* unlink: link the victim into the pending area */
  SHIM_RMDIR,                /* an empty directory: its metadata */
  SHIM_RENAME,               /* capture what the new name held, record the move */
  SHIM_EXCHANGE,             /* RENAME_EXCHANGE: record the swap */
  SHIM_MKDIR,                /* a record alone */
  SHIM_MKNOD,                /* a record alone */
  SHIM_SYMLINK,              /* a record alone */
  SHIM_LINK,                 /* a record alone (a new name of an existing file) */
  SHIM_TRUNCATE,             /* truncate by path: content before the call */
  SHIM_METADATA,             /* chmod, chown, ACL xattr: the old mode and owner */
  SHIM_FD_FIRST_CHANGE,      /* the first change through a marked fd: content now */
  SHIM_FD_NO_CAPTURE,        /* a change through an fd with nothing pending */
  SHIM_FD_UNKNOWN_CHANGE,    /* ftruncate/fallocate on an fd the shim never marked: content now, by fd */
  SHIM_EXEC,                 /* exec, spawn: pending fds captured, environment put back */
  SHIM_PASS,                 /* left to the tracer (a syscall() number the shim does not handle) */
};

enum { SHIM_MARK_NONE = 0, SHIM_MARK_PENDING = 1, SHIM_MARK_CAPTURED = 2, SHIM_MARK_CREATED = 3 };

/* Where the host's call goes once the shim's work is done. */
enum shim_route {
  SHIM_ROUTE_REAL = 0, /* the real function: the filter stops it and the tracer captures it (the
                          fallback, always safe; the default) */
  SHIM_ROUTE_STUB,     /* from the stub, unstopped: the shim captured it, or it needs no record */
  SHIM_ROUTE_FAIL,     /* not made at all: it fails with fail_errno (capture-failure policy "block") */
};

/* One interposed call, from before to after. */
struct shim_call {
  const char* entry;       /* the symbol the host called: "openat64", "__open_2", ... */
  enum shim_class cls;
  int saved_errno;         /* errno as the host had it before the call */
  int fd;                  /* the fd the call acts on, or -1 */
  int mark_result;         /* what shim_after marks the returned fd (fd_marks.h) */
  int claimed;             /* this call claimed fd's capture (fd_marks.h) */
  int route;               /* enum shim_route */
  int fail_errno;          /* SHIM_ROUTE_FAIL: the call's errno */
  int spill_errno;         /* an inline pre-image that had to be copied instead, and the copy failed */
  /* An open whose writes the shim will not see (a stdio stream: glibc
   * writes through its internal __write, which no preload reaches): its
   * content is captured at the open, and its fd is left unmarked. */
  int writes_unseen;
  /* A CALL record is in the ring (interpose/linux/capture.h): the OUTCOME
   * follows the host's call, with what is needed for its lstat. */
  int recorded;
  uint32_t action;         /* enum guard_shim_action */
  uint64_t call_id;
  /* The caller's pid and tid, at the call's first need (shim_call_pid,
   * shim_call_ids in interpose/linux/capture_record.h); 0 until then. The
   * pid is asked of the kernel every call (a vfork child or a raw clone's
   * child makes calls of its own); the tid is kept per thread with the pid
   * it was asked under. */
  int32_t pid;
  int32_t tid;
  int parent1, parent2;    /* the parents of path1, path2: fds, AT_FDCWD (-1: none) */
  int parent1_owned;       /* 1: parent1 is the shim's own O_PATH fd, closed after the call; 0: the host's,
                              or for parent2, parent1 itself */
  int parent2_owned;
  const char* base1;       /* the final components, in the host's strings */
  const char* base2;
  int after_fd;            /* fchmod's fd: the OUTCOME's fstat (-1: none) */
  /* The name locks the call holds (interpose/linux/name_lock.h): buckets,
   * released once its OUTCOME is in the ring, or at once when it records
   * nothing. */
  uint32_t locks[2];
  int nlocks;
  unsigned kill_number;    /* test only (interpose/linux/test_kill.h): its number among the captured */
};

/* The pathname calls. `dirfd` is AT_FDCWD for the calls without one. */
void shim_before_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode);
void shim_before_temp(struct shim_call* c, const char* template_path, int is_dir);
void shim_before_delete(struct shim_call* c, int dirfd, const char* path, int at_flags);
void shim_before_rename(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd,
                        const char* newpath, unsigned flags);
void shim_before_mkdir(struct shim_call* c, int dirfd, const char* path, mode_t mode);
void shim_before_mknod(struct shim_call* c, int dirfd, const char* path, mode_t mode);
void shim_before_symlink(struct shim_call* c, const char* target, int dirfd, const char* path);
void shim_before_link(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath);
void shim_before_truncate(struct shim_call* c, const char* path);
/* chmod, chown (uid/gid -1: unchanged), setxattr: path calls have fd -1;
 * fd calls a NULL path. `name` is the xattr's name, NULL for the others. */
void shim_before_metadata(struct shim_call* c, int dirfd, const char* path, int fd, const char* xattr_name);

/* A change of content through `fd` (write family, ftruncate, fallocate,
 * copy_file_range's destination, a shared mmap). `known_writer` is 0 for
 * ftruncate and fallocate, which may reach an fd the shim never saw opened
 * (inherited across exec): those capture by fd. */
void shim_before_fd_change(struct shim_call* c, int fd, int known_writer);

/* fd is being closed, or replaced by dup2/dup3 (its old file is closed). */
void shim_before_close(struct shim_call* c, int fd);
/* fd is being duplicated: the copy shares its pending capture, so it is
 * captured now rather than tracked twice. */
void shim_before_dup(struct shim_call* c, int fd);

/* exec, posix_spawn, system, popen: every pending fd that survives exec
 * is captured first (the new image's shim knows nothing of it). With
 * `with_cloexec`, the close-on-exec ones too: a posix_spawn's file actions
 * can dup2 any fd onto a number the new image keeps. */
void shim_before_exec(struct shim_call* c, const char* what, int with_cloexec);

/* A syscall() number the shim does not handle: left to the real function. */
void shim_before_pass(struct shim_call* c, long nr);

/* After the host's call: `rc` and `err` are its result and errno. */
void shim_after(struct shim_call* c, long rc, int err);

/* The names of the classes, as the test report writes them. */
const char* shim_class_name(enum shim_class cls);

#endif /* GUARD_INTERPOSE_SHIM_CAPTURE_H_ */
