/* A path argument as the capture sees it: its parent as an fd, the
 * parent's canonical path, the absolute path (that + "/" + the final
 * component), and the lstat the pre-image decision rests on. The parent fd
 * serves the lstat, the link or copy into the pending area and the lstat
 * after the call; the host's own call keeps its own arguments. Stack
 * buffers only.
 *
 * The parent is borrowed when the path is a single name ("f", "d/"): the
 * call's own dirfd, or AT_FDCWD, named by /proc/thread-self/fd/<dirfd> or by
 * getcwd. That saves an open and a close per call, and the name and the
 * lstat then reach the directory the host's call reaches, through the same
 * fd. So is a name whose dirname is only "." and empty components ("./f").
 * Otherwise (a path with a '/', a final "." or "..") the parent is opened
 * O_PATH here and owned: closed by whoever holds it last. A call's second
 * path in the same directory, named the same way (a rename's or a link's),
 * borrows the first path's parent, owned or not (shim_path_resolve_beside):
 * it must be done with it before the first path's is closed. */
#ifndef GUARD_INTERPOSE_LINUX_CAPTURE_PATH_H_
#define GUARD_INTERPOSE_LINUX_CAPTURE_PATH_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/shim_record.h"

struct shim_path {
  int parent;        /* the parent: an O_PATH|O_DIRECTORY fd, the call's dirfd, AT_FDCWD; -1: none */
  int owns_parent;   /* 1: opened here (closed by shim_path_close); 0: borrowed (the host's dirfd, or the
                        parent of the call's other path, which closes it), never closed through this one */
  const char* base;  /* the final component, inside the host's string */
  char abs[PATH_MAX];
  size_t len;
  struct guard_shim_stat st; /* lstat before the call */
  /* The mount the name itself is on, from the same look as st (a statx
   * with STATX_MNT_ID): for a name that is no directory, its parent's
   * mount, unless the name is a mount point of its own, which then places
   * it apart (shim_path_place). mnt_known 0: not known (no such name, or
   * a kernel without it). */
  int mnt_known;
  uint64_t mnt_id;
  int parent_err;    /* shim_path_resolve failed to open the parent: its errno; else 0 */
  size_t parent_len; /* abs[0..parent_len) names the parent ("/" counts 1); 0: abs names no parent
                        of a final name ("." or ".." resolved to a directory of its own) */
  /* Its name lock's bucket (name_lock.h) and that bucket's word just
   * before the lstat above (shim_name_lock_seen). */
  uint32_t lock_index;
  uint32_t lock_seen;
  int dirfd;         /* how the host named it: the call's dirfd, */
  const char* dir;   /* and its dirname: the first dir_len bytes of the host's string (NULL: no '/') */
  size_t dir_len;
};

/* The path a host's call names, copied into the shim's own buffer `copy`
 * (PATH_MAX bytes) before anything looks at it; the copy is what the shim
 * classifies, captures and hands to the kernel (from the stub, or to the
 * real function, where the tracer reads it), so that all of them read the
 * same bytes whatever another thread writes into the host's buffer
 * meanwhile. Cheap insurance against an accidental race, not a security
 * boundary: the copy is on the calling thread's stack, which every thread
 * of the process may write (docs/security.md, "Path race"). NULL, and a
 * string with no NUL in its first PATH_MAX bytes (which the kernel refuses
 * with ENAMETOOLONG), come back as they are. */
const char* shim_path_copy(char* copy, const char* path);

/* Declares a copy of the path argument `path` and points `path` at it. */
#define SHIM_PATH_COPY(path)          \
  char path##_shim_copy_[PATH_MAX];   \
  path = shim_path_copy(path##_shim_copy_, path)

/* Resolves `path` relative to `dirfd` and lstats it. 0, or -1 when the
 * shim must leave the call to the tracer: an empty path, a symlink named
 * with a trailing slash (a final "." or ".." is named by the directory it
 * reaches, base staying "." or ".."), a parent that cannot be opened or named (deleted,
 * not absolute), a string longer than GUARD_SHIM_MAX_STRING. */
int shim_path_resolve(struct shim_path* p, int dirfd, const char* path);

/* As shim_path_resolve, for a second path of the same call (rename,
 * link): when its dirname is byte for byte `sibling`'s, relative to the
 * same dirfd, it is the same directory the kernel reaches for both, so p
 * borrows the sibling's parent and name instead of resolving them again
 * (an open, a name, a close). The sibling must outlive p's use of it. */
int shim_path_resolve_beside(struct shim_path* p, const struct shim_path* sibling, int dirfd, const char* path);

/* Closes the parent if owned (unless handed over: parent set to -1). */
void shim_path_close(struct shim_path* p);

/* lstat of `base` under `parent` (err set on failure). */
void shim_path_lstat(int parent, const char* base, struct guard_shim_stat* out);
/* The same of p's name into p->st, with its mount (p->mnt_known, mnt_id):
 * one statx. */
void shim_path_look(struct shim_path* p);
void shim_path_fstat(int fd, struct guard_shim_stat* out);

/* The text of the symlink p names, into buf (not NUL-terminated); its
 * length, or -1. */
long shim_path_readlink(const struct shim_path* p, char* buf, size_t cap);

/* "/proc/thread-self/fd/N" into `link` (SHIM_FD_LINK_MAX bytes): the
 * calling thread's fd table, which is not the process's when the thread
 * unshared it (unshare(CLONE_FILES)); /proc/self names the leader's. */
#define SHIM_FD_LINK_MAX 40
void shim_fd_link(int fd, char* link);

/* 1 if the name ends in " (deleted)", as /proc ends the name of a file or
 * directory that lost it; a live name may end so too: the caller asks the
 * inode. */
int shim_name_ends_deleted(const char* s, size_t len);

/* shim_fd_link(fd)'s link text into buf (NUL-terminated); length or -1. */
long shim_fd_path(int fd, char* buf, size_t cap);

/* 1 if abs[0..len) is dir itself or below it. */
int shim_path_under(const char* abs, size_t len, const char* dir, size_t dir_len);

/* 1 if the shim must not capture at this path: under guard's state
 * directory, or under /proc, /sys, /dev. */
int shim_path_forbidden(const char* abs, size_t len);
/* Whether `abs` is guard's: under the state directory, the inboxes or the
 * configuration directory. */
int shim_path_guarded(const char* abs, size_t len);
/* Whether `abs` is one of those or a directory above one. */
int shim_path_holds_guarded(const char* abs, size_t len);

/* 1 if the path is the protected root or below it, by its name alone. */
int shim_path_in_root(const char* abs, size_t len);

/* Where a path is, by its name and by the directory it is in (`dir_fd`:
 * its parent, AT_FDCWD for the cwd, or for fchmod the file itself): one
 * statx of dir_fd (device
 * and mount id) against the root's and the state directory's. A bind
 * mount gives a directory another name with the same device, on a mount
 * of its own, so:
 *   - named inside the root, on the root's own mount: SHIM_PLACE_ROOT;
 *   - named outside the root and the state directory, on a device neither
 *     is on, or on the root's own mount (which shows each directory at one
 *     name) when the state directory is on it too or on another device:
 *     SHIM_PLACE_OUTSIDE;
 *   - otherwise SHIM_PLACE_UNSURE: named inside the root but on another
 *     mount (something mounted inside it, another mount namespace), or
 *     named outside but on another mount of their device (maybe another
 *     name of one of them: a bind mount, a chroot); the tracer, which knows the trees by
 *     device and inode (supervisor/trace/tree_anchors.h), takes it. */
enum shim_place { SHIM_PLACE_UNSURE = 0, SHIM_PLACE_ROOT, SHIM_PLACE_OUTSIDE };
enum shim_place shim_place_of(int dir_fd, const char* abs, size_t len);

/* shim_place_of of a resolved path, without its statx when p's own look
 * said the name's device and mount (a name that exists and is no
 * directory: on its parent's mount, or a mount point, which is then on
 * another mount and placed as such; a directory may be a mount point of
 * the root's own mount, so it asks its parent). */
enum shim_place shim_path_place(const struct shim_path* p);

/* shim_place_of of a path in the same directory as `sibling`, already
 * placed at `sibling_place`: the same answer without a second statx
 * whenever the names do not tell them apart (neither guard's, both inside
 * the root or both outside by name); else shim_place_of of p. */
enum shim_place shim_place_beside(const struct shim_path* p, const struct shim_path* sibling,
                                  enum shim_place sibling_place);

#endif /* GUARD_INTERPOSE_LINUX_CAPTURE_PATH_H_ */
