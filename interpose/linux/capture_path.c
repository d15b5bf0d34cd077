#include "interpose/linux/capture_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "interpose/linux/capture_config.h"
#include "interpose/linux/name_lock.h"
#include "interpose/linux/syscall_stub.h"

static void fill_stat(const struct stat* st, struct guard_shim_stat* out) {
  out->err = 0;
  out->mode = st->st_mode;
  out->dev = st->st_dev;
  out->ino = st->st_ino;
  out->size = (uint64_t)st->st_size;
  out->nlink = st->st_nlink;
  out->uid = st->st_uid;
  out->gid = st->st_gid;
  out->mtime_sec = st->st_mtim.tv_sec;
  out->mtime_nsec = st->st_mtim.tv_nsec;
  out->ctime_sec = st->st_ctim.tv_sec;
  out->ctime_nsec = st->st_ctim.tv_nsec;
}

void shim_path_lstat(int parent, const char* base, struct guard_shim_stat* out) {
  struct stat st;
  memset(out, 0, sizeof *out);
  long rc = shim_own_syscall(SYS_newfstatat, parent, (long)base, (long)&st, AT_SYMLINK_NOFOLLOW, 0, 0);
  if (rc != 0) {
    out->err = (int32_t)-rc;
    return;
  }
  fill_stat(&st, out);
}

void shim_path_look(struct shim_path* p) {
  struct statx stx;
  p->mnt_known = 0;
  memset(&p->st, 0, sizeof p->st);
  long rc = shim_own_syscall(SYS_statx, p->parent, (long)p->base, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                             STATX_BASIC_STATS | STATX_MNT_ID, (long)&stx, 0);
  if (rc == -ENOSYS || rc == -EPERM || rc == -EINVAL ||
      (rc == 0 && (stx.stx_mask & STATX_BASIC_STATS) != STATX_BASIC_STATS)) {
    /* No statx (before Linux 4.11, or a policy refuses it), or a file
     * system that leaves a field out: what lstat says. */
    shim_path_lstat(p->parent, p->base, &p->st);
    return;
  }
  if (rc != 0) {
    p->st.err = (int32_t)-rc;
    return;
  }
  p->st.mode = stx.stx_mode;
  p->st.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  p->st.ino = stx.stx_ino;
  p->st.size = stx.stx_size;
  p->st.nlink = stx.stx_nlink;
  p->st.uid = stx.stx_uid;
  p->st.gid = stx.stx_gid;
  p->st.mtime_sec = stx.stx_mtime.tv_sec;
  p->st.mtime_nsec = stx.stx_mtime.tv_nsec;
  p->st.ctime_sec = stx.stx_ctime.tv_sec;
  p->st.ctime_nsec = stx.stx_ctime.tv_nsec;
  if (stx.stx_mask & STATX_MNT_ID) {
    p->mnt_known = 1;
    p->mnt_id = stx.stx_mnt_id;
  }
}

void shim_path_fstat(int fd, struct guard_shim_stat* out) {
  struct stat st;
  memset(out, 0, sizeof *out);
  long rc = shim_own_syscall(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
  if (rc != 0) {
    out->err = (int32_t)-rc;
    return;
  }
  fill_stat(&st, out);
}

void shim_fd_link(int fd, char* link) {
  static const char prefix[] = "/proc/thread-self/fd/";
  memcpy(link, prefix, sizeof prefix - 1);
  char digits[12];
  int n = 0;
  unsigned v = (unsigned)fd;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  size_t at = sizeof prefix - 1;
  while (n > 0) link[at++] = digits[--n];
  link[at] = '\0';
}

long shim_fd_path(int fd, char* buf, size_t cap) {
  char link[SHIM_FD_LINK_MAX];
  shim_fd_link(fd, link);
  long got = shim_own_syscall(SYS_readlink, (long)link, (long)buf, (long)cap - 1, 0, 0, 0);
  if ((got > 0 && (size_t)got >= cap - 1) || got == -ENAMETOOLONG) return -ENAMETOOLONG; /* maybe cut short */
  if (got <= 0) return -1;
  buf[got] = '\0';
  return got;
}

int shim_name_ends_deleted(const char* s, size_t len) {
  static const char tag[] = " (deleted)";
  return len >= sizeof tag - 1 && memcmp(s + len - (sizeof tag - 1), tag, sizeof tag - 1) == 0;
}

/* 1 if `s`, the /proc name of the directory `fd` (or the cwd's, by
 * getcwd, which fails for a deleted cwd instead), names a directory that was
 * deleted. /proc ends such a name in " (deleted)", but a live directory may
 * be called that too ("build (deleted)"): the inode decides, as the
 * tracer decides (a deleted directory has no link left). */
static int names_deleted(int fd, const char* s, size_t len) {
  if (!shim_name_ends_deleted(s, len) || fd == AT_FDCWD) return 0;
  struct guard_shim_stat st;
  shim_path_fstat(fd, &st);
  return st.err != 0 || st.nlink == 0;
}

/* The absolute name of the parent into p->abs (its length), the final
 * component `base` (blen bytes; `slashed`: the host's string has trailing
 * slashes after it) appended, and the lstat. p->parent is set. 0, or -1
 * with p->parent_err set when the name is too long. */
/* The bucket of p's name and its lock word, just before the lstat that
 * decides the capture (name_lock.h). */
static void note_lock(struct shim_path* p) {
  p->lock_index = shim_name_lock_index(p->abs, p->len);
  p->lock_seen = shim_name_lock_seen(p->lock_index);
}

static int finish(struct shim_path* p, long len, const char* base, size_t blen, int slashed) {
  size_t at = (size_t)len;
  if (at == 1) at = 0; /* the parent is "/" */
  if (at + 1 + blen >= sizeof p->abs || at + 1 + blen > GUARD_SHIM_MAX_STRING) {
    p->parent_err = ENAMETOOLONG;
    return -1;
  }
  p->abs[at] = '/';
  memcpy(p->abs + at + 1, base, blen);
  p->abs[at + 1 + blen] = '\0';
  p->len = at + 1 + blen;
  p->parent_len = (size_t)len;
  p->base = base;
  if (slashed) {
    /* A symlink named with a trailing slash is resolved through: the call
     * acts on what it points to, not on the name (the tracer's). */
    struct guard_shim_stat own;
    shim_path_lstat(p->parent, p->abs + at + 1, &own);
    if (own.err == 0 && (own.mode & S_IFMT) == S_IFLNK) return -1;
  }
  note_lock(p);
  shim_path_look(p);
  return 0;
}

/* The canonical name of a directory the caller names by dirfd (or the
 * cwd) into buf: its length, or <= 0 when it has none fit to record
 * (deleted, unreachable, too long, no such fd: the owned way then says
 * which, as it always did). */
static long borrowed_name(int dirfd, char* buf, size_t cap) {
  if (dirfd == AT_FDCWD) {
    /* The syscall, not glibc's getcwd: it counts the NUL, and gives
     * -ENOENT for a deleted cwd and "(unreachable)/..." for one outside
     * the process's root, which the check below refuses. */
    long got = shim_own_syscall(SYS_getcwd, (long)buf, (long)cap, 0, 0, 0, 0);
    return got <= 1 ? -1 : got - 1;
  }
  if (dirfd < 0) return -1;
  return shim_fd_path(dirfd, buf, cap);
}

/* A single name under the call's own dirfd: 0 when the fast way settles
 * it, -1 when the owned way must (it then gives today's answer, errno
 * included, for every case this one does not take: a dirfd that is no
 * directory or cannot be searched, a bad fd, a deleted or unreachable
 * directory, a name too long). An lstat that fails but with ENOENT is
 * redone, since only the owned open tells "no such parent" (ENOTDIR,
 * EACCES, EBADF) from a failure of the name itself. */
static int resolve_borrowed(struct shim_path* p, int dirfd, const char* base, size_t blen, int slashed) {
  long len = borrowed_name(dirfd, p->abs, sizeof p->abs);
  if (len <= 0 || p->abs[0] != '/' || names_deleted(dirfd, p->abs, (size_t)len)) return -1;
  p->parent = dirfd;
  p->owns_parent = 0;
  if (finish(p, len, base, blen, slashed) == 0 && (p->st.err == 0 || p->st.err == ENOENT)) return 0;
  p->parent = -1;
  p->parent_err = 0;
  return -1;
}

/* A parent the host names from the cwd by plain components alone (no
 * ".."; an empty or "." component names the directory it is in, and is
 * left out of the name: python's and find's "./Lib/x.py"): opened with
 * RESOLVE_NO_SYMLINKS, it is reached by walking down real directories, so
 * its name is the cwd's followed by those components, without /proc's own
 * path walk (readlink of
 * /proc/self/fd/N was 8% of tar -x's time under the shim). The components
 * keep the host's spelling, as the tracer's walk keeps it: on a
 * case-insensitive directory that may differ from the stored one. So the
 * way is taken only where no spelling can change what the shim decides by
 * name: the cwd's own (canonical) name inside the root, and no directory
 * of guard's at, above or below it. The fd and the name's length, or -1:
 * a symlink on the way, a cwd elsewhere or without a name, an openat2 the
 * kernel or a policy refuses, a name too long; the general way then
 * decides, errors included. (A chdir by another thread between the getcwd
 * and the open names the fd after the new cwd; the host's own call, made
 * after, resolves its relative path from the new cwd too.) */
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif
struct shim_open_how {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};
/* Set once openat2 is known missing (ENOSYS before Linux 5.6; EPERM, EINVAL
 * or E2BIG from a seccomp policy or an older struct): never tried again.
 * Relaxed: a hint, any value is safe. */
static _Atomic int openat2_missing;

/* The components of `dir` (n bytes, relative) that name a directory below
 * the one it starts from, each appended to `out` after a '/' (out may be
 * NULL: counted only; else it has room for n + 1 bytes), the bytes written
 * into *out_len: empty and "." components are left out. Their count, or -1
 * for a ".." (whose directory the name does not spell). */
static long plain_components(const char* dir, size_t n, char* out, size_t* out_len) {
  long count = 0;
  size_t at = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && dir[j] != '/') ++j;
    size_t c = j - i;
    if (c == 2 && dir[i] == '.' && dir[i + 1] == '.') return -1;
    if (c != 0 && !(c == 1 && dir[i] == '.')) {
      if (out != NULL) {
        out[at] = '/';
        memcpy(out + at + 1, dir + i, c);
      }
      at += 1 + c;
      ++count;
    }
    i = j + 1;
  }
  if (out_len != NULL) *out_len = at;
  return count;
}

static long open_plain_parent(int dirfd, const char* dir, size_t n, char* abs, size_t cap, long* len) {
  if (dirfd != AT_FDCWD || dir[0] == '/') return -1;
  /* Without the stub the open would stop in the tracer (openat2 is always
   * trapped), where the readlink of the general way does not; alone (no
   * tracer answered the handshake, shim_hello.h) there is none to stop it. */
  if (!(shim_stub_ready() || shim_config.alone) || atomic_load_explicit(&openat2_missing, memory_order_relaxed)) {
    return -1;
  }
  if (plain_components(dir, n, NULL, NULL) <= 0) return -1;
  long got = borrowed_name(AT_FDCWD, abs, cap);
  if (got <= 0 || abs[0] != '/') return -1;
  size_t at = (size_t)got;
  if (!shim_path_in_root(abs, at) || shim_path_forbidden(abs, at) || shim_path_holds_guarded(abs, at)) return -1;
  if (at == 1) at = 0; /* the cwd is "/" */
  if (at + 1 + n >= cap) return -1; /* the components and their slashes take n + 1 bytes at most */
  struct shim_open_how how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS};
  long fd = shim_own_syscall(SYS_openat2, AT_FDCWD, (long)dir, (long)&how, sizeof how, 0, 0);
  if (fd < 0) {
    if (fd == -ENOSYS || fd == -EPERM || fd == -EINVAL || fd == -E2BIG) {
      atomic_store_explicit(&openat2_missing, 1, memory_order_relaxed);
    }
    return -1;
  }
  size_t added = 0;
  (void)plain_components(dir, n, abs + at, &added);
  abs[at + added] = '\0';
  *len = (long)(at + added);
  return fd;
}

/* path split as the kernel reads it: `end` is its length without trailing
 * slashes ("dir/" names "dir"; the lstats go by the host's "dir/", which
 * the kernel resolves as the call does), `slash` the last '/' before it or
 * NULL, `base` the final component (blen bytes). 0, or -1 for a path of
 * slashes alone. */
struct shim_split {
  size_t end;
  const char* slash;
  const char* base;
  size_t blen;
};

static int split_path(const char* path, size_t n, struct shim_split* sp) {
  size_t end = n;
  while (end > 0 && path[end - 1] == '/') --end;
  if (end == 0) return -1;
  const char* slash = NULL;
  for (size_t i = end; i > 0; --i) {
    if (path[i - 1] == '/') {
      slash = path + i - 1;
      break;
    }
  }
  sp->end = end;
  sp->slash = slash;
  sp->base = slash == NULL ? path : slash + 1;
  sp->blen = (size_t)(path + end - sp->base);
  return 0;
}

static int is_dots(const char* base, size_t blen) {
  return (blen == 1 && base[0] == '.') || (blen == 2 && base[0] == '.' && base[1] == '.');
}

int shim_path_resolve(struct shim_path* p, int dirfd, const char* path) {
  p->mnt_known = 0;
  p->parent = -1;
  p->owns_parent = 0;
  p->parent_err = 0;
  p->parent_len = 0;
  p->dirfd = dirfd;
  p->dir = NULL;
  p->dir_len = 0;
  if (path == NULL || path[0] == '\0') return -1;
  size_t n = strnlen(path, PATH_MAX);
  if (n >= PATH_MAX || n > GUARD_SHIM_MAX_STRING) {
    p->parent_err = ENAMETOOLONG;
    return -1;
  }
  struct shim_split sp;
  if (split_path(path, n, &sp) != 0) return -1;
  if (sp.slash != NULL) {
    p->dir = path;
    p->dir_len = (size_t)(sp.slash - path);
  }
  size_t end = sp.end;
  const char* slash = sp.slash;
  const char* base = sp.base;
  size_t blen = sp.blen;
  /* "." and "..": the call acts on a directory the name does not spell;
   * its canonical name is read from the directory itself, below. */
  int dots = is_dots(base, blen);
  if (blen > NAME_MAX) return -1;
  /* A name whose dirname is only "." and empty components ("./f") is the
   * single name under the same directory. */
  int here = slash == NULL || (path[0] != '/' && plain_components(path, (size_t)(slash - path), NULL, NULL) == 0);
  if (here && !dots && resolve_borrowed(p, dirfd, base, blen, end != n) == 0) return 0;
  char dir[PATH_MAX];
  if (slash == NULL) {
    dir[0] = '.';
    dir[1] = '\0';
  } else if (slash == path) {
    dir[0] = '/';
    dir[1] = '\0';
  } else {
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
  }
  long len = -1;
  long fd = slash == NULL ? -1 : open_plain_parent(dirfd, dir, (size_t)(slash - path), p->abs, sizeof p->abs, &len);
  if (fd >= 0) {
    p->parent = (int)fd;
    p->owns_parent = 1;
  } else {
    fd = shim_own_syscall(SYS_openat, dirfd, (long)dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    if (fd < 0) {
      p->parent_err = (int)-fd;
      return -1;
    }
    p->parent = (int)fd;
    p->owns_parent = 1;
    len = shim_fd_path(p->parent, p->abs, sizeof p->abs);
  }
  if (len <= 0 || p->abs[0] != '/' || names_deleted(p->parent, p->abs, (size_t)len)) {
    if (len == -ENAMETOOLONG || (len > 0 && (size_t)len >= sizeof p->abs)) p->parent_err = ENAMETOOLONG;
    shim_path_close(p);
    return -1;
  }
  if (dots) {
    long t = shim_own_syscall(SYS_openat, p->parent, (long)base, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    len = t < 0 ? -1 : shim_fd_path((int)t, p->abs, sizeof p->abs);
    int gone = t >= 0 && len > 0 && names_deleted((int)t, p->abs, (size_t)len);
    if (t >= 0) shim_own_syscall(SYS_close, t, 0, 0, 0, 0, 0);
    if (len <= 0 || p->abs[0] != '/' || gone || (size_t)len > GUARD_SHIM_MAX_STRING) {
      if (len == -ENAMETOOLONG) p->parent_err = ENAMETOOLONG;
      shim_path_close(p);
      return -1;
    }
    p->len = (size_t)len;
    p->parent_len = 0; /* abs is the directory itself, not its parent's name */
    p->base = base; /* the lstats go through the parent by "." or "..", as the call does */
    note_lock(p);
    shim_path_look(p);
    return 0;
  }
  if (finish(p, len, base, blen, end != n) != 0) {
    shim_path_close(p);
    return -1;
  }
  return 0;
}

int shim_path_resolve_beside(struct shim_path* p, const struct shim_path* sibling, int dirfd, const char* path) {
  if (sibling->parent_len == 0 || dirfd != sibling->dirfd || path == NULL) return shim_path_resolve(p, dirfd, path);
  size_t n = strnlen(path, PATH_MAX);
  struct shim_split sp;
  if (n >= PATH_MAX || n > GUARD_SHIM_MAX_STRING || split_path(path, n, &sp) != 0 || is_dots(sp.base, sp.blen) ||
      sp.blen > NAME_MAX) {
    return shim_path_resolve(p, dirfd, path);
  }
  /* The same dirname: both without one (the dirfd itself), or the same
   * bytes before their last slashes. */
  size_t dn = sp.slash == NULL ? 0 : (size_t)(sp.slash - path);
  if ((sp.slash == NULL) != (sibling->dir == NULL) || dn != sibling->dir_len ||
      memcmp(path, sibling->dir, dn) != 0) {
    return shim_path_resolve(p, dirfd, path);
  }
  p->mnt_known = 0;
  p->parent = sibling->parent;
  p->owns_parent = 0;
  p->parent_err = 0;
  p->dirfd = dirfd;
  p->dir = sp.slash == NULL ? NULL : path;
  p->dir_len = dn;
  memcpy(p->abs, sibling->abs, sibling->parent_len);
  /* The sibling's resolve proved the parent a directory it can search, so
   * the lstat's error, if any, is the name's own. */
  if (finish(p, (long)sibling->parent_len, sp.base, sp.blen, sp.end != n) != 0) {
    p->parent = -1;
    return -1;
  }
  return 0;
}

void shim_path_close(struct shim_path* p) {
  if (p->owns_parent && p->parent >= 0) shim_own_syscall(SYS_close, p->parent, 0, 0, 0, 0, 0);
  p->parent = -1;
  p->owns_parent = 0;
}

long shim_path_readlink(const struct shim_path* p, char* buf, size_t cap) {
  long got = shim_own_syscall(SYS_readlinkat, p->parent, (long)p->base, (long)buf, (long)cap, 0, 0);
  if (got < 0 || (size_t)got >= cap) return -1;
  return got;
}

const char* shim_path_copy(char* copy, const char* path) {
  if (path == NULL) return path;
  /* The string is read twice (its length, then its bytes): a byte another
   * thread changes in between makes the copy a mix of both, still one
   * string of that length, and it is the copy that everyone reads. The
   * library's strnlen and memcpy: 25 to 50 ns for 16 to 200 bytes, against
   * 30 to 360 ns byte by byte. */
  size_t len = strnlen(path, PATH_MAX);
  if (len == PATH_MAX) return path;
  memcpy(copy, path, len);
  copy[len] = '\0';
  return copy;
}

int shim_path_under(const char* abs, size_t len, const char* dir, size_t dir_len) {
  if (dir_len == 1 && dir[0] == '/') return 1;
  if (len < dir_len || memcmp(abs, dir, dir_len) != 0) return 0;
  return len == dir_len || abs[dir_len] == '/';
}

int shim_path_guarded(const char* abs, size_t len) {
  return shim_path_under(abs, len, shim_config.state, shim_config.state_len) ||
         (shim_config.inbox_len != 0 && shim_path_under(abs, len, shim_config.inbox, shim_config.inbox_len)) ||
         (shim_config.config_dir_len != 0 &&
          shim_path_under(abs, len, shim_config.config_dir, shim_config.config_dir_len));
}

int shim_path_holds_guarded(const char* abs, size_t len) {
  return shim_path_under(shim_config.state, shim_config.state_len, abs, len) ||
         (shim_config.inbox_len != 0 && shim_path_under(shim_config.inbox, shim_config.inbox_len, abs, len)) ||
         (shim_config.config_dir_len != 0 &&
          shim_path_under(shim_config.config_dir, shim_config.config_dir_len, abs, len));
}

int shim_path_forbidden(const char* abs, size_t len) {
  return shim_path_guarded(abs, len) || shim_path_under(abs, len, "/proc", 5) ||
         shim_path_under(abs, len, "/sys", 4) || shim_path_under(abs, len, "/dev", 4);
}

int shim_path_in_root(const char* abs, size_t len) {
  return shim_path_under(abs, len, shim_config.root, shim_config.root_len);
}

enum shim_place shim_place_beside(const struct shim_path* p, const struct shim_path* sibling,
                                  enum shim_place sibling_place) {
  if (p->parent != sibling->parent) return shim_path_place(p);
  /* shim_place_of decides by the parent's statx and by two things of the
   * name: guard's or not, inside the root or not. */
  if (shim_path_guarded(p->abs, p->len) || shim_path_guarded(sibling->abs, sibling->len) ||
      shim_path_in_root(p->abs, p->len) != shim_path_in_root(sibling->abs, sibling->len)) {
    return shim_path_place(p);
  }
  return sibling_place;
}

/* The place of `abs`, guard's excepted, by the device and mount of the
 * directory it is in (or of the name itself: shim_path_place). */
static enum shim_place place_by_mount(const char* abs, size_t len, uint64_t dev, int mnt_known, uint64_t mnt_id) {
  if (shim_path_in_root(abs, len)) {
    return mnt_known && mnt_id == shim_config.root_mnt_id ? SHIM_PLACE_ROOT : SHIM_PLACE_UNSURE;
  }
  if (dev != shim_config.root_dev && dev != shim_config.state_dev) return SHIM_PLACE_OUTSIDE;
  /* On the root's own mount, a canonical name outside the root is outside
   * it: one mount shows each of its directories at one path, and only
   * another mount of the same filesystem (a bind mount) shows them at
   * another. The state directory's twin of that holds when it is on the
   * root's mount too, or on another device. */
  int on_root_mount = mnt_known && mnt_id == shim_config.root_mnt_id;
  int state_apart = shim_config.state_dev != shim_config.root_dev || shim_config.state_mnt_id == shim_config.root_mnt_id ||
                    shim_config.state_sealed;
  return on_root_mount && state_apart ? SHIM_PLACE_OUTSIDE : SHIM_PLACE_UNSURE;
}

enum shim_place shim_place_of(int dir_fd, const char* abs, size_t len) {
  if (shim_path_guarded(abs, len)) return SHIM_PLACE_UNSURE;
  struct statx stx;
  long rc = shim_own_syscall(SYS_statx, dir_fd, (long)"", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
                             (long)&stx, 0);
  if (rc != 0) return SHIM_PLACE_UNSURE;
  return place_by_mount(abs, len, makedev(stx.stx_dev_major, stx.stx_dev_minor), (stx.stx_mask & STATX_MNT_ID) != 0,
                        stx.stx_mnt_id);
}

enum shim_place shim_path_place(const struct shim_path* p) {
  if (p->st.err != 0 || !p->mnt_known || (p->st.mode & S_IFMT) == S_IFDIR) {
    return shim_place_of(p->parent, p->abs, p->len);
  }
  if (shim_path_guarded(p->abs, p->len)) return SHIM_PLACE_UNSURE;
  return place_by_mount(p->abs, p->len, p->st.dev, 1, p->mnt_id);
}
