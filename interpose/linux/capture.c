#include "interpose/linux/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "interpose/linux/capture_alone.h"
#include "interpose/linux/capture_owner.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/name_lock.h"
#include "interpose/fd_marks.h"
#include "interpose/linux/capture_path.h"
#include "interpose/linux/capture_record.h"
#include "interpose/linux/pre_image.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/linux/test_kill.h"
#include "interpose/shim_process.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

static void set_string(struct shim_strings* s, int which, const char* text, size_t len) {
  s->s[which] = text;
  s->n[which] = len;
}

/* Puts the CALL and hands the parents over to c (for the OUTCOME's lstat;
 * an owned one closed by shim_capture_after); the call then goes from the stub. If the
 * record cannot be put, the pre-images are dropped and the call falls back
 * to the tracer, which captures it itself. */
static int commit(struct shim_call* c, uint32_t action, uint64_t flags, uint32_t mode, struct shim_path* p1,
                  struct shim_path* p2, struct shim_strings* s) {
  if (p1 != NULL) set_string(s, GUARD_SHIM_STR_PATH1, p1->abs, p1->len);
  if (p2 != NULL) set_string(s, GUARD_SHIM_STR_PATH2, p2->abs, p2->len);
  shim_test_kill_point(c, SHIM_KILL_PRE_IMAGE);
  int rc = shim_record_call(c, action, flags, mode, p1 != NULL ? &p1->st : NULL, p2 != NULL ? &p2->st : NULL, s);
  shim_pre_image_keep_done(s);
  /* An inline pre-image whose copy failed is a pre-image not saved: alone,
   * the capture-failure policy decides (shim_alone_settle), with ENOSPC for
   * a full disk and EIO otherwise, as saved() has it. */
  if (rc != 0 && c->spill_errno != 0 && shim_config.alone) {
    c->fail_errno = c->spill_errno == ENOSPC || c->spill_errno == EDQUOT ? ENOSPC : EIO;
    if (shim_config.block_on_failure && p1 != NULL) shim_alone_refused(p1->abs, p1->len, c->spill_errno);
  }
  if (rc != 0) {
    if (s->n[GUARD_SHIM_STR_PENDING1] != 0) shim_pre_image_drop(s->s[GUARD_SHIM_STR_PENDING1]);
    if (s->n[GUARD_SHIM_STR_PENDING2] != 0) shim_pre_image_drop(s->s[GUARD_SHIM_STR_PENDING2]);
    c->route = SHIM_ROUTE_REAL;
    return -1;
  }
  shim_test_kill_point(c, SHIM_KILL_CALL);
  c->route = SHIM_ROUTE_STUB;
  if (p1 != NULL) {
    c->parent1 = p1->parent;
    c->parent1_owned = p1->owns_parent;
    c->base1 = p1->base;
    p1->parent = -1;
    p1->owns_parent = 0;
  }
  if (p2 != NULL) {
    c->parent2 = p2->parent;
    c->parent2_owned = p2->owns_parent;
    c->base2 = p2->base;
    p2->parent = -1;
    p2->owns_parent = 0;
  }
  return 0;
}

static int is_type(const struct guard_shim_stat* st, mode_t type) {
  return st->err == 0 && (st->mode & S_IFMT) == type;
}

/* Where a resolved path is (capture_path.h, shim_path_place): by its own
 * look where that says, else one statx of its parent. */
static enum shim_place place_of(const struct shim_path* p) { return shim_path_place(p); }

static int under_state(const struct shim_path* p) { return shim_path_guarded(p->abs, p->len); }

/* Alone, a libc call that would change guard's state directory fails as
 * the tracer makes it fail; with a tracer, it is the tracer's. */
static void refuse_state(struct shim_call* c) {
  if (!shim_config.alone) return;
  c->route = SHIM_ROUTE_FAIL;
  c->fail_errno = EACCES;
}

/* A delete or rename whose name is guard's state directory or a directory
 * above it: 1 (refused alone, the tracer's otherwise). */
static int removes_state(struct shim_call* c, const struct shim_path* p) {
  if (!shim_path_holds_guarded(p->abs, p->len)) return 0;
  refuse_state(c);
  return 1;
}

/* A path the shim leaves to the tracer by its name (capture_path.h,
 * shim_path_forbidden): 1 when it is one. Alone (capture_alone.h), the
 * shim decides here what the tracer would: guard's state directory is
 * refused as the tracer refuses it (EACCES), /proc and /sys (pseudo-files,
 * no file of the root) run unrecorded, but for a /proc link a call would
 * follow (a miss); /dev is a place like any other outside the root (0). A
 * /proc/PID/fd link an open follows is followed before (follow_open). */
static int special_path(struct shim_call* c, const struct shim_path* p) {
  if (!shim_path_forbidden(p->abs, p->len)) return 0;
  if (!shim_config.alone) return 1;
  if (under_state(p)) {
    refuse_state(c);
  } else if (shim_path_under(p->abs, p->len, "/dev", 4)) {
    return 0;
  } else if (is_type(&p->st, S_IFLNK)) {
    /* A /proc magic link (/proc/self/fd/N, /dev/fd/N, /proc/PID/cwd): a
     * truncate, chmod or chown that follows it reaches a file anywhere,
     * the root's maybe, which nothing here can name: left to the real
     * function, a miss (shim_alone_settle), never run unrecorded. */
  } else {
    c->route = SHIM_ROUTE_STUB;
  }
  return 1;
}

/* Alone, a file with other names or a writer is copied: nobody else would
 * keep its content (with a tracer it is the tracer's, which knows the other
 * names). 0, or -1: leave the call. */
static int alone_copy(struct shim_call* c, const struct shim_path* p, char* name, size_t* name_len) {
  if (!shim_config.alone) return -1;
  return shim_pre_image_copy_at(c, p->parent, p->base, name, name_len);
}

/* A pre-image that could not be saved (`err`): alone, under "block" the
 * call then fails as the tracer would fail it (shim_alone_settle), with
 * ENOSPC for a full disk and EIO otherwise, rather than as a miss; under
 * "allow" it goes on (0) and its record names no pre-image. */
static int saved(struct shim_call* c, const struct shim_path* p, size_t* name_len, int err) {
  if (err == 0 || !shim_config.alone) return err;
  /* Under "allow" the call is recorded without its pre-image: the
   * supervisor flags it not captured and says so in one line naming it
   * (Capture::MayProceedUncaptured). */
  if (!shim_config.block_on_failure) {
    *name_len = 0;
    return 0;
  }
  c->fail_errno = err == ENOSPC || err == EDQUOT ? ENOSPC : EIO;
  shim_alone_refused(p->abs, p->len, err);
  return err;
}

/* A pre-image of a file whose name the call removes: a link of it, or,
 * alone, a copy where a link would not keep it. */
static int keep_removed(struct shim_call* c, const struct shim_path* p, char* name, size_t* name_len) {
  if (p->st.nlink == 1 && shim_pre_image_link(c, p->parent, p->base, name, name_len) == 0) return 0;
  return alone_copy(c, p, name, name_len);
}

/* shim_path_resolve failed: -1. Alone, a parent that does not exist or
 * cannot be searched: the call fails the same way by itself (ENOENT,
 * ENOTDIR, EACCES, ELOOP), so it goes as it is, unrecorded, rather than as
 * a miss. (A parent made by someone else in between lets a creation run
 * unrecorded: nothing of the tree is lost by it.) */
static int resolve_failed(struct shim_call* c, struct shim_path* p) {
  int e = p->parent_err;
  if (!shim_config.alone) return -1;
  if (e == ENOENT || e == ENOTDIR || e == EACCES || e == ELOOP) {
    c->route = SHIM_ROUTE_STUB;
  } else if (e == ENAMETOOLONG && shim_config.block_on_failure) {
    /* No absolute name to record it by: refused, as the tracer refuses it. */
    c->route = SHIM_ROUTE_FAIL;
    c->fail_errno = ENAMETOOLONG;
  }
  return -1;
}

static int resolve(struct shim_call* c, struct shim_path* p, int dirfd, const char* path) {
  if (shim_path_resolve(p, dirfd, path) == 0) return 0;
  return resolve_failed(c, p);
}

void shim_unlock_names(struct shim_call* c) {
  for (int i = 0; i < c->nlocks; ++i) shim_name_lock_give(c->locks[i], c->tid);
  c->nlocks = 0;
}

/* Takes the name locks of the call's resolved paths (name_lock.h), in
 * bucket order (two calls each on two names never wait for each other in a
 * circle), and looks at a path again when its lock shows someone held it or
 * changed it since its resolve's look: what the capture decides from p->st
 * is then what the call will meet. A capture that follows a symlink locks
 * the names it ends at only. */
static void lock_names(struct shim_call* c, struct shim_path* p1, struct shim_path* p2) {
  shim_unlock_names(c);
  shim_call_ids(c);
  /* A process the ring refuses (another pid namespace: its thread ids are
   * not the others') records nothing, and takes no lock. */
  if (!shim_name_locks_usable(c->pid)) return;
  struct shim_path* ps[2] = {p1, p2};
  int n = p2 != NULL ? 2 : 1;
  if (n == 2 && p2->lock_index < p1->lock_index) {
    ps[0] = p2;
    ps[1] = p1;
  }
  int same = n == 2 && ps[0]->lock_index == ps[1]->lock_index; /* one bucket: taken once */
  for (int i = 0; i < (same ? 1 : n); ++i) {
    /* A FIFO, a device, a socket: its open may block for as long as it
     * likes (a FIFO without a reader), and it holds no content to keep. */
    if (!same && ps[i]->st.err == 0 && !is_type(&ps[i]->st, S_IFREG) && !is_type(&ps[i]->st, S_IFDIR) &&
        !is_type(&ps[i]->st, S_IFLNK)) {
      continue;
    }
    int got = shim_name_lock_take(ps[i]->lock_index, ps[i]->lock_seen, c->tid);
    if (got < 0) continue; /* no ring, nested, or waited too long: unlocked, as before locks */
    c->locks[c->nlocks++] = ps[i]->lock_index;
    if (got == 0) shim_path_look(ps[i]);
    /* The other name's look holds if the word was the same at both. */
    if (same && (got == 0 || ps[1]->lock_seen != ps[0]->lock_seen)) {
      shim_path_look(ps[1]);
    }
  }
}

/* resolve() of a call's second path, sharing the first's parent when both
 * name the same directory the same way (shim_path_resolve_beside). */
static int resolve_beside(struct shim_call* c, struct shim_path* p, const struct shim_path* sibling, int dirfd,
                          const char* path) {
  if (shim_path_resolve_beside(p, sibling, dirfd, path) == 0) return 0;
  return resolve_failed(c, p);
}

void shim_capture_fell_back(struct shim_call* c) {
  c->route = SHIM_ROUTE_REAL;
  if (shim_config.ready) c->mark_result = SHIM_MARK_NONE;
}

/* Outside the root a call is recorded by name, as the tracer records it
 * (Capture: kOutsideRoot): its CALL with the lstats and no pre-image (no
 * link, no copy, no symlink text), then its OUTCOME. */

static void capture_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode, int depth);

/* Alone: the open follows a symlink, so the shim follows it too and
 * captures what it reaches (the host's call then follows the same link,
 * unless someone changes it in between). A /proc/PID/fd link to something
 * that is no file (a pipe, a socket) reaches nothing to capture. */
static void follow_open(struct shim_call* c, struct shim_path* p, int flags, mode_t mode, int wanted,
                        int depth) {
  char target[GUARD_SHIM_MAX_STRING + 1];
  /* Two links are enough for `> /dev/stdout` (a link to /proc/self/fd/1, a
   * link to the file) and keep the stack this costs small (about 8 KiB a
   * level): a host may run this in a signal handler on a small stack. */
  long n = depth < 2 ? shim_path_readlink(p, target, sizeof target) : -1;
  if (n <= 0) return;
  target[n] = '\0';
  if (target[0] != '/' && shim_path_under(p->abs, p->len, "/proc", 5)) {
    c->route = SHIM_ROUTE_STUB;
    return;
  }
  c->mark_result = wanted;
  capture_open(c, p->parent, target, flags, mode, depth + 1);
  if (c->parent1 == p->parent && p->owns_parent) {
    /* The target is a single name: its capture borrowed this parent and
     * handed it to c, which now closes it after the call. */
    c->parent1_owned = 1;
    p->parent = -1;
    p->owns_parent = 0;
  }
}

void shim_capture_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode) {
  capture_open(c, dirfd, path, flags, mode, 0);
}

static void capture_open(struct shim_call* c, int dirfd, const char* path, int flags, mode_t mode, int depth) {
  if (!shim_config.ready) return;
  int writes = (flags & O_ACCMODE) != O_RDONLY;
  /* Read-only, O_PATH: nothing changes (and the filter lets them go). */
  if ((flags & O_PATH) || (!writes && !(flags & (O_CREAT | O_TRUNC)))) return;
  if ((flags & O_TMPFILE) == O_TMPFILE) {
    c->route = SHIM_ROUTE_STUB; /* an unnamed file: nothing to record until it is linked */
    return;
  }
  /* The classification's choice of mark, for when the shim captures; a
   * fallback marks nothing (the tracer captured at the open). */
  int wanted = c->mark_result;
  c->mark_result = SHIM_MARK_NONE;
  struct shim_path p;
  if (resolve(c, &p, dirfd, path) != 0) return;
  lock_names(c, &p, NULL);
  const struct guard_shim_stat* st = &p.st;
  struct shim_strings s = {{0}, {0}};
  char name[SHIM_PENDING_NAME_MAX];
  size_t name_len = 0;
  if (under_state(&p)) {
    (void)special_path(c, &p);
    goto out;
  }
  /* A character device (`>/dev/null`, a terminal) holds no file: the
   * tracer records nothing for it either (Capture::Describe). */
  if (is_type(st, S_IFCHR)) {
    c->route = SHIM_ROUTE_STUB;
    goto out;
  }
  if (is_type(st, S_IFLNK) && !(flags & O_NOFOLLOW)) { /* it would follow the link: the tracer's */
    if (shim_config.alone) follow_open(c, &p, flags, mode, wanted, depth);
    goto out;
  }
  if (special_path(c, &p)) goto out;
  if (st->err != 0 && st->err != ENOENT) goto out;
  if ((st->err == ENOENT && !(flags & O_CREAT)) || is_type(st, S_IFLNK)) {
    /* Fails (or opens what another process just made: nothing of ours);
     * a symlink with O_NOFOLLOW fails with ELOOP. */
    c->route = SHIM_ROUTE_STUB;
    goto out;
  }
  enum shim_place place = place_of(&p);
  if (place == SHIM_PLACE_UNSURE) goto out;
  int in_root = place == SHIM_PLACE_ROOT;
  if (st->err == ENOENT) {
    /* A creation: a record alone. With O_EXCL an fd means the open made
     * the inode (else EEXIST): inside the root its fd is marked created. */
    if (commit(c, GUARD_SHIM_OPEN, (uint64_t)(unsigned)flags, mode, &p, NULL, &s) == 0 && wanted != SHIM_MARK_NONE) {
      c->mark_result = in_root && (flags & O_EXCL) ? SHIM_MARK_CREATED : SHIM_MARK_CAPTURED;
    }
    goto out;
  }
  if (!is_type(st, S_IFREG)) { /* a directory, a FIFO: nothing of a file's content */
    (void)commit(c, GUARD_SHIM_OPEN, (uint64_t)(unsigned)flags, mode, &p, NULL, &s);
    goto out;
  }
  /* Another name may be inside the root: the tracer's (alone, the copy at
   * the open or the first write keeps the content all the same). */
  if (st->nlink > 1 && !shim_config.alone) goto out;
  if (!in_root) {
    /* Recorded at the open, as the tracer does; nothing at the first write. */
    if (commit(c, GUARD_SHIM_OPEN, (uint64_t)(unsigned)flags, mode, &p, NULL, &s) == 0 && wanted != SHIM_MARK_NONE) {
      c->mark_result = SHIM_MARK_CAPTURED;
    }
    goto out;
  }
  if ((flags & O_CREAT) && (flags & O_EXCL)) { /* fails with EEXIST */
    (void)commit(c, GUARD_SHIM_OPEN, (uint64_t)(unsigned)flags, mode, &p, NULL, &s);
    goto out;
  }
  /* A vfork child (the marks are not its own) and a stdio stream (its
   * writes are glibc's internal ones) capture at the open. */
  int now = shim_process_is_borrowed_by(c) || c->writes_unseen;
  if (!(flags & O_TRUNC) && !writes) { /* O_RDONLY|O_CREAT of an existing file */
    c->route = SHIM_ROUTE_STUB;
    goto out;
  }
  if (!(flags & O_TRUNC) && !now) {
    /* The lazy capture: the fd is marked, its content copied at the first
     * change through it (fd_marks.h). */
    c->route = SHIM_ROUTE_STUB;
    c->mark_result = wanted;
    goto out;
  }
  /* O_TRUNC, a vfork child's open for writing, a stdio stream's: the
   * content now (inside the CALL when it is small). */
  if (saved(c, &p, &name_len, shim_pre_image_keep_at(c, p.parent, p.base, st->size, &s, name, &name_len)) != 0) goto out;
  set_string(&s, GUARD_SHIM_STR_PENDING1, name, name_len);
  if (commit(c, GUARD_SHIM_OPEN, (uint64_t)(unsigned)flags, mode, &p, NULL, &s) == 0 && wanted != SHIM_MARK_NONE) {
    c->mark_result = SHIM_MARK_CAPTURED;
  }
out:
  shim_path_close(&p);
}

void shim_capture_delete(struct shim_call* c, int dirfd, const char* path, int at_flags, int is_remove) {
  if (!shim_config.ready || (at_flags & ~AT_REMOVEDIR) != 0) return;
  struct shim_path p;
  if (resolve(c, &p, dirfd, path) != 0) return;
  lock_names(c, &p, NULL);
  struct shim_strings s = {{0}, {0}};
  char name[SHIM_PENDING_NAME_MAX];
  char target[GUARD_SHIM_MAX_STRING + 1];
  size_t name_len = 0;
  if (special_path(c, &p)) goto out;
  if (removes_state(c, &p)) goto out;
  enum shim_place place = place_of(&p);
  if (place == SHIM_PLACE_UNSURE) goto out;
  uint32_t action = (at_flags & AT_REMOVEDIR) ? GUARD_SHIM_RMDIR : GUARD_SHIM_UNLINK;
  if (is_remove && is_type(&p.st, S_IFDIR)) action = GUARD_SHIM_RMDIR;
  if (place == SHIM_PLACE_ROOT && action == GUARD_SHIM_UNLINK && is_type(&p.st, S_IFREG)) {
    /* The file itself, by a second name: nothing copied. A file with other
     * names keeps its content; which name is the root's is the tracer's;
     * so is a file someone has open for writing (pre_image.h). */
    if (saved(c, &p, &name_len, keep_removed(c, &p, name, &name_len)) != 0) goto out;
    set_string(&s, GUARD_SHIM_STR_PENDING1, name, name_len);
  } else if (place == SHIM_PLACE_ROOT && action == GUARD_SHIM_UNLINK && is_type(&p.st, S_IFLNK)) {
    long n = shim_path_readlink(&p, target, sizeof target);
    if (n < 0) goto out;
    set_string(&s, GUARD_SHIM_STR_OLD_TARGET1, target, (size_t)n);
  }
  (void)commit(c, action, (uint64_t)(unsigned)at_flags, 0, &p, NULL, &s);
out:
  shim_path_close(&p);
}

void shim_capture_rename(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                         unsigned flags) {
  /* RENAME_WHITEOUT, and RENAME_EXCHANGE with another flag: the tracer's. */
  int exchange = (flags & RENAME_EXCHANGE) != 0;
  if (!shim_config.ready) return;
  if (exchange ? flags != RENAME_EXCHANGE : (flags & ~(unsigned)RENAME_NOREPLACE) != 0) return;
  struct shim_path from, to;
  if (resolve(c, &from, olddirfd, oldpath) != 0) return;
  if (resolve_beside(c, &to, &from, newdirfd, newpath) != 0) {
    shim_path_close(&from);
    return;
  }
  lock_names(c, &from, &to);
  struct shim_strings s = {{0}, {0}};
  char name[SHIM_PENDING_NAME_MAX];
  char target1[GUARD_SHIM_MAX_STRING + 1];
  char target2[GUARD_SHIM_MAX_STRING + 1];
  size_t name_len = 0;
  if (special_path(c, &from) || special_path(c, &to)) goto out;
  if (removes_state(c, &from)) goto out;
  enum shim_place place_from = place_of(&from);
  if (place_from == SHIM_PLACE_UNSURE) goto out;
  enum shim_place place_to = shim_place_beside(&to, &from, place_from);
  if (place_to == SHIM_PLACE_UNSURE) goto out;
  int in_from = place_from == SHIM_PLACE_ROOT;
  int in_to = place_to == SHIM_PLACE_ROOT;
  /* Across the root's edge, whatever moves: what leaves needs its content
   * kept (Capture::Describe copies it), a directory brings or takes a whole
   * tree (the tracer walks it), what arrives may replace a file. */
  if (in_from != in_to) goto out;
  if (in_from && is_type(&from.st, S_IFLNK)) {
    long n = shim_path_readlink(&from, target1, sizeof target1);
    if (n < 0) goto out;
    set_string(&s, GUARD_SHIM_STR_OLD_TARGET1, target1, (size_t)n);
  }
  if (in_to && exchange) {
    /* The two swap places and both stay: their metadata is enough
     * (Capture::Describe), and a symlink's text. */
    if (is_type(&to.st, S_IFLNK)) {
      long n = shim_path_readlink(&to, target2, sizeof target2);
      if (n < 0) goto out;
      set_string(&s, GUARD_SHIM_STR_OLD_TARGET2, target2, (size_t)n);
    }
  } else if (in_to && !(flags & RENAME_NOREPLACE)) {
    if (is_type(&to.st, S_IFREG)) {
      if (saved(c, &to, &name_len, keep_removed(c, &to, name, &name_len)) != 0) goto out;
      set_string(&s, GUARD_SHIM_STR_PENDING2, name, name_len);
    } else if (is_type(&to.st, S_IFLNK)) {
      long n = shim_path_readlink(&to, target2, sizeof target2);
      if (n < 0) goto out;
      set_string(&s, GUARD_SHIM_STR_OLD_TARGET2, target2, (size_t)n);
    }
  }
  (void)commit(c, GUARD_SHIM_RENAME, flags, 0, &from, &to, &s);
out:
  shim_path_close(&from);
  shim_path_close(&to);
}

void shim_capture_create(struct shim_call* c, uint32_t action, int dirfd, const char* path, mode_t mode,
                         const char* target) {
  if (!shim_config.ready) return;
  size_t target_len = 0;
  if (target != NULL) {
    target_len = strnlen(target, GUARD_SHIM_MAX_STRING + 1);
    if (target_len > GUARD_SHIM_MAX_STRING) return;
  }
  struct shim_path p;
  if (resolve(c, &p, dirfd, path) != 0) return;
  lock_names(c, &p, NULL);
  struct shim_strings s = {{0}, {0}};
  if (shim_config.alone && action == GUARD_SHIM_MKDIR && p.st.err == 0 && under_state(&p)) {
    /* mkdir -p of guard's own directories (a guard command run inside the
     * session): fails with EEXIST by itself and changes nothing, as the
     * tracer lets it (Capture::IsHarmless). */
    c->route = SHIM_ROUTE_STUB;
    goto out;
  }
  if (special_path(c, &p) || place_of(&p) == SHIM_PLACE_UNSURE) goto out;
  if (target != NULL) set_string(&s, GUARD_SHIM_STR_TARGET, target, target_len);
  (void)commit(c, action, 0, mode, &p, NULL, &s);
out:
  shim_path_close(&p);
}

void shim_capture_link(struct shim_call* c, int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                       int flags) {
  /* AT_SYMLINK_FOLLOW, AT_EMPTY_PATH: the file linked is not the name given. */
  if (!shim_config.ready || flags != 0) return;
  struct shim_path from, to;
  if (resolve(c, &from, olddirfd, oldpath) != 0) return;
  if (resolve_beside(c, &to, &from, newdirfd, newpath) != 0) {
    shim_path_close(&from);
    return;
  }
  lock_names(c, &from, &to);
  struct shim_strings s = {{0}, {0}};
  if (special_path(c, &from) || special_path(c, &to)) goto out;
  enum shim_place place_from = place_of(&from);
  if (place_from == SHIM_PLACE_UNSURE || shim_place_beside(&to, &from, place_from) == SHIM_PLACE_UNSURE) goto out;
  (void)commit(c, GUARD_SHIM_LINK, 0, 0, &from, &to, &s);
out:
  shim_path_close(&from);
  shim_path_close(&to);
}

void shim_capture_truncate(struct shim_call* c, const char* path) {
  if (!shim_config.ready) return;
  struct shim_path p;
  if (resolve(c, &p, AT_FDCWD, path) != 0) return;
  lock_names(c, &p, NULL);
  struct shim_strings s = {{0}, {0}};
  char name[SHIM_PENDING_NAME_MAX];
  size_t name_len = 0;
  /* A symlink (followed), a file of several names, anything but a plain
   * file: the tracer's. */
  if (special_path(c, &p) || !is_type(&p.st, S_IFREG)) goto out;
  if (p.st.nlink != 1 && !shim_config.alone) goto out;
  enum shim_place place = place_of(&p);
  if (place == SHIM_PLACE_UNSURE) goto out;
  if (place == SHIM_PLACE_ROOT) {
    if (saved(c, &p, &name_len, shim_pre_image_keep_at(c, p.parent, p.base, p.st.size, &s, name, &name_len)) != 0) {
      goto out;
    }
    set_string(&s, GUARD_SHIM_STR_PENDING1, name, name_len);
  }
  (void)commit(c, GUARD_SHIM_TRUNCATE, 0, 0, &p, NULL, &s);
out:
  shim_path_close(&p);
}

/* The chmod and chown families by path: resolves `path` into *p and says
 * whether the shim may capture the call (0), or leaves it (-1, *p closed):
 * a flag but AT_SYMLINK_NOFOLLOW (AT_EMPTY_PATH), a special path, a
 * symlink the call follows, an unsure place. */
static int metadata_path(struct shim_call* c, struct shim_path* p, int dirfd, const char* path, int flags) {
  if (!shim_config.ready || (flags & ~AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (resolve(c, p, dirfd, path) != 0) return -1;
  lock_names(c, p, NULL);
  if (special_path(c, p) || (is_type(&p->st, S_IFLNK) && !(flags & AT_SYMLINK_NOFOLLOW)) ||
      place_of(p) == SHIM_PLACE_UNSURE) {
    shim_path_close(p);
    return -1;
  }
  return 0;
}

void shim_capture_chmod(struct shim_call* c, int dirfd, const char* path, mode_t mode, int flags) {
  struct shim_path p;
  if (metadata_path(c, &p, dirfd, path, flags) != 0) return;
  struct shim_strings s = {{0}, {0}};
  (void)commit(c, GUARD_SHIM_CHMOD, (uint64_t)(unsigned)flags, mode, &p, NULL, &s);
  shim_path_close(&p);
}

void shim_capture_chown(struct shim_call* c, int dirfd, const char* path, int flags) {
  struct shim_path p;
  if (metadata_path(c, &p, dirfd, path, flags) != 0) return;
  struct shim_strings s = {{0}, {0}};
  mode_t after;
  if (p.st.err != 0 || !shim_chown_clears(p.st.mode, &after)) {
    /* It fails by itself, or changes the owner alone: nothing guard keeps. */
    c->route = SHIM_ROUTE_STUB;
  } else {
    (void)commit(c, GUARD_SHIM_CHMOD, (uint64_t)(unsigned)flags, after, &p, NULL, &s); /* the chmod it amounts to */
  }
  shim_path_close(&p);
}

/* Whether `fd` names an inode this process's recorded O_EXCL creation made
 * (its CREATED mark, and an fstat that finds the same inode: a mark can be
 * stale, and a vfork child reads its parent's). Such a file has no past: a
 * change of its mode or owner goes from the stub unrecorded, and its end
 * state is the seal's (fd_marks.h). */
int shim_fd_created_here(int fd) {
  uint64_t id = shim_fd_created_id(fd);
  if (id == 0) return 0;
  struct guard_shim_stat st;
  shim_path_fstat(fd, &st);
  return st.err == 0 && shim_fd_inode_id(st.dev, st.ino) == id;
}

void shim_capture_fchmod(struct shim_call* c, int fd, mode_t mode) {
  if (!shim_config.ready || fd < 0) return;
  if (shim_fd_created_here(fd)) {
    c->route = SHIM_ROUTE_STUB;
    return;
  }
  char path[PATH_MAX];
  long len = shim_fd_path(fd, path, sizeof path);
  if (len <= 0 || path[0] != '/' || len > GUARD_SHIM_MAX_STRING) return;
  if (shim_path_forbidden(path, (size_t)len)) return;
  /* The file's own mount and device: it was opened through some name. */
  if (shim_place_of(fd, path, (size_t)len) == SHIM_PLACE_UNSURE) return;
  struct guard_shim_stat before;
  shim_path_fstat(fd, &before);
  if (before.err != 0) return;
  /* A file whose name was deleted (/proc then ends it in " (deleted)", as
   * a live name may end too) is the tracer's, which finds its other names:
   * the name is taken only if it still reaches this very inode. */
  if (shim_name_ends_deleted(path, (size_t)len)) {
    struct guard_shim_stat named;
    shim_path_lstat(AT_FDCWD, path, &named);
    if (before.nlink == 0 || named.err != 0 || named.dev != before.dev || named.ino != before.ino) return;
  }
  struct shim_strings s = {{0}, {0}};
  set_string(&s, GUARD_SHIM_STR_PATH1, path, (size_t)len);
  shim_test_kill_point(c, SHIM_KILL_PRE_IMAGE);
  if (shim_record_call(c, GUARD_SHIM_FCHMOD, 0, mode, &before, NULL, &s) != 0) return;
  shim_test_kill_point(c, SHIM_KILL_CALL);
  c->route = SHIM_ROUTE_STUB;
  c->after_fd = fd;
}

void shim_capture_after(struct shim_call* c, long rc, int err) {
  if (c->recorded) {
    struct guard_shim_stat after;
    if (rc < 0) {
      shim_stat_unmade(&after);
    } else if (c->action == GUARD_SHIM_OPEN) {
      shim_path_fstat((int)rc, &after);
      if (c->mark_result == SHIM_MARK_CREATED && after.err == 0) {
        shim_fd_mark_created((int)rc, shim_fd_inode_id(after.dev, after.ino));
      }
    } else if (c->action == GUARD_SHIM_RENAME || c->action == GUARD_SHIM_LINK) {
      shim_path_lstat(c->parent2, c->base2, &after);
    } else if (c->action == GUARD_SHIM_UNLINK || c->action == GUARD_SHIM_RMDIR) {
      memset(&after, 0, sizeof after);
      after.err = ENOENT;
    } else if (c->action == GUARD_SHIM_FCHMOD) {
      shim_path_fstat(c->after_fd, &after);
    } else {
      shim_path_lstat(c->parent1, c->base1, &after);
    }
    shim_test_kill_point(c, SHIM_KILL_OUTCOME);
    shim_record_outcome(c, rc, err, &after);
    c->recorded = 0;
  }
  /* A borrowed parent is the host's dirfd (or AT_FDCWD), or parent2 is
   * parent1 itself (a rename or link within one directory): never closed
   * through it. The OUTCOME's lstat above is done before any close. */
  if (c->parent1_owned && c->parent1 >= 0) shim_own_syscall(SYS_close, c->parent1, 0, 0, 0, 0, 0);
  if (c->parent2_owned && c->parent2 >= 0) shim_own_syscall(SYS_close, c->parent2, 0, 0, 0, 0, 0);
  c->parent1 = c->parent2 = -1;
  c->parent1_owned = c->parent2_owned = 0;
}
