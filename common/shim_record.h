/* shim_record.h: the records the preload shim puts into the ring
 * (common/ring_format.h) for the supervisor (docs/ring.md, "The shim's
 * records"). C, for the shim; the supervisor's consumer reads them
 * (supervisor/capture/shim_records.h).
 *
 * One call the shim captured is two records from the thread that made it:
 *   GUARD_SHIM_RECORD_CALL, published before the call runs: what it asks,
 *     on which absolute paths, what they held (the shim's lstat), and the
 *     names of the pre-images it put into the store's pending directory;
 *   GUARD_SHIM_RECORD_OUTCOME, published once the call returned: its result,
 *     and the lstat of what it left.
 * A CALL without its OUTCOME (the thread died inside the call, or its
 * process was killed before the OUTCOME) reads as "may have happened".
 *
 * Every field is little-endian and naturally aligned; the strings follow the
 * fixed part, in the order of their lengths, not NUL-terminated. */
#ifndef GUARD_COMMON_SHIM_RECORD_H_
#define GUARD_COMMON_SHIM_RECORD_H_

#include <stdint.h>

#include "common/ring_format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GUARD_SHIM_RECORD_CALL (GUARD_RING_TYPE_FIRST_USER + 0u)
#define GUARD_SHIM_RECORD_OUTCOME (GUARD_RING_TYPE_FIRST_USER + 1u)

/* What the call asks: the supervisor's MutationRequest::Action
 * (supervisor/capture/mutation.h), by the same numbers. */
enum guard_shim_action {
  GUARD_SHIM_OPEN = 0,     /* path1; flags, mode: the open's */
  GUARD_SHIM_TRUNCATE = 1, /* truncate(path1) */
  GUARD_SHIM_FTRUNCATE = 2,/* a first change through an fd: path1 is the file it reached */
  GUARD_SHIM_RENAME = 3,   /* path1 -> path2; flags: renameat2's */
  GUARD_SHIM_UNLINK = 4,
  GUARD_SHIM_RMDIR = 5,
  GUARD_SHIM_MKDIR = 6,    /* mode */
  GUARD_SHIM_SYMLINK = 7,  /* path1 = the link, target = its text */
  GUARD_SHIM_LINK = 8,     /* path1 = existing, path2 = the new name */
  GUARD_SHIM_CHMOD = 9,    /* mode = the new mode */
  GUARD_SHIM_FCHMOD = 10,  /* path1 = the file the fd reached; mode = the new mode */
  GUARD_SHIM_MKNOD = 11,   /* mode with its S_IFMT bits */
};

/* The lstat the shim made of a path before (or after) the call. */
struct guard_shim_stat {
  int32_t err;       /* 0: the path exists and the fields hold; else lstat's errno (ENOENT: absent) */
  uint32_t mode;     /* st_mode, type bits included */
  uint64_t dev, ino; /* st_dev, st_ino */
  uint64_t size;
  uint64_t nlink;
  uint32_t uid, gid;
  int64_t mtime_sec, mtime_nsec;
  int64_t ctime_sec, ctime_nsec;
};

/* The lengths of the strings that follow a CALL's fixed part, in this order. */
enum {
  GUARD_SHIM_STR_PATH1 = 0,   /* absolute, canonical parent + the name as the call names it */
  GUARD_SHIM_STR_PATH2,       /* rename, link: the second path; else empty */
  GUARD_SHIM_STR_TARGET,      /* symlink: the new link's text */
  GUARD_SHIM_STR_OLD_TARGET1, /* path1 was a symlink: its text before the call */
  GUARD_SHIM_STR_OLD_TARGET2, /* path2 was a symlink: its text before the call */
  GUARD_SHIM_STR_PENDING1,    /* the pre-image of path1's content in the store's pending
                                 directory (a link of the file, or a copy): one name, or empty */
  GUARD_SHIM_STR_PENDING2,    /* the same for path2 (what a rename's destination held) */
  GUARD_SHIM_STR_COMM,        /* the calling process's name (/proc/self/comm, no newline) */
  GUARD_SHIM_STR_COUNT
};

struct guard_shim_call {
  uint64_t call_id;   /* this thread's counter: the OUTCOME names it */
  int32_t tid;        /* gettid() of the caller */
  uint32_t action;    /* enum guard_shim_action */
  uint64_t flags;     /* open flags; renameat2 flags; *at flags */
  uint32_t mode;      /* open, mkdir, mknod, chmod: the mode asked */
  uint16_t content;   /* GUARD_SHIM_CONTENT_INLINE: the bytes after the strings are path1's
                         content before the call (as many as before1.size); else 0 */
  uint16_t reserved;  /* 0 */
  struct guard_shim_stat before1, before2; /* path1's and path2's lstat before the call */
  uint16_t lengths[GUARD_SHIM_STR_COUNT];  /* bytes of each string that follows (8 of them:
                                              the fixed part stays a multiple of 8) */
  /* char strings[]: the strings, back to back */
};

struct guard_shim_outcome {
  uint64_t call_id;   /* the CALL's */
  int32_t tid;
  int32_t err;        /* 0: the call succeeded; else its errno */
  int64_t result;     /* its return value (an fd for an open) */
  /* The lstat, made right after the call, of the path it left something
   * at: path2 of a rename or link, else path1. err is ENOENT after a
   * delete; the record of a failed call leaves it unmade (err = -1). */
  struct guard_shim_stat after;
};

/* A CALL whose record carries path1's content itself, read by the shim
 * into the ring after the strings (docs/ring.md, "Inline pre-images"), in
 * place of a copy in the pending area: a regular file of at most
 * GUARD_SHIM_INLINE_MAX bytes (and at most a sixteenth of the ring). Below
 * that a copy made by the caller into a new file of the inbox cost more
 * than the supervisor's store of the bytes (docs/performance.md). */
#define GUARD_SHIM_CONTENT_INLINE 1u
#define GUARD_SHIM_INLINE_MAX (256u * 1024u)

/* The longest a string of a CALL may be (a path longer than this, or than
 * PATH_MAX, is left to the tracer). */
#define GUARD_SHIM_MAX_STRING 4095u

#ifdef __cplusplus
}
#endif

#endif /* GUARD_COMMON_SHIM_RECORD_H_ */
