#include "interpose/linux/pre_image.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h> /* SEEK_DATA, SEEK_HOLE */

#include "common/inbox_layout.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/capture_record.h"
#include "interpose/linux/syscall_stub.h"

/* Per process, shared by its threads (and by a vfork child, whose pid
 * differs anyway). Relaxed: uniqueness is all it gives. */
static _Atomic uint64_t pending_counter;

/* Tries of a fresh name when one is taken: a process that died with its
 * pre-images not yet adopted may have had this pid. */
#define SHIM_PENDING_NAME_TRIES 8

static size_t put_uint(char* out, uint64_t v) {
  char digits[24];
  size_t n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

/* 16 hex digits, fresh at each exec: the kernel's AT_RANDOM bytes of this
 * image. A process that execs keeps its pid and starts its counter again,
 * and the names its earlier image made have left the inbox for the store
 * already (BlobStore::TakeFromInbox), where a clash would lose one: the
 * image's own digits keep them apart. Set by shim_pre_image_init, before
 * the capture is ready (getauxval allocates nothing). */
static char image_digits[17];

void shim_pre_image_init(void) {
  {
    const unsigned char* r = (const unsigned char*)getauxval(AT_RANDOM);
    static const char hex[] = "0123456789abcdef";
    char d[17];
    for (int i = 0; i < 8; ++i) {
      unsigned v = r != NULL ? r[i] : (unsigned)i;
      d[2 * i] = hex[v >> 4];
      d[2 * i + 1] = hex[v & 15];
    }
    d[16] = '\0';
    memcpy(image_digits, d, sizeof d);
  }
}

/* The path of pre-image `name` (`len` bytes) in the inbox, in its shard
 * (common/inbox_layout.h), relative to shim_config.pending_fd: "S/NAME"
 * under the inbox's fd, else absolute. At most 4095 + 1 + 2 + 255 bytes and
 * a NUL, within PATH_MAX + SHIM_PENDING_NAME_MAX. */
static void inbox_path(const char* name, size_t len, char* path) {
  size_t at = 0;
  if (shim_config.pending_fd == AT_FDCWD) {
    at = shim_config.pending_len;
    memcpy(path, shim_config.pending, at);
    path[at++] = '/';
  }
  path[at++] = guard_inbox_shard_char(guard_inbox_shard(name, len));
  path[at++] = '/';
  memcpy(path + at, name, len);
  path[at + len] = '\0';
}

/* A fresh name into `name` and the absolute path into `path`, by the ids
 * of the call it is for (asked once per call: shim_call_ids). */
static void next_name(struct shim_call* c, char* name, size_t* name_len, char* path) {
  shim_call_ids(c);
  size_t at = shim_config.session_len;
  memcpy(name, shim_config.session, at);
  name[at++] = '-';
  name[at++] = 's';
  at += put_uint(name + at, (uint64_t)(uint32_t)c->pid);
  name[at++] = '.';
  at += put_uint(name + at, (uint64_t)(uint32_t)c->tid);
  name[at++] = '.';
  memcpy(name + at, image_digits, 16);
  at += 16;
  name[at++] = '.';
  at += put_uint(name + at, atomic_fetch_add_explicit(&pending_counter, 1, memory_order_relaxed));
  name[at] = '\0';
  *name_len = at;
  /* session <= 150 bytes (capture_config.h), "-s", three numbers of at
   * most 20 digits, 16 digits and 3 dots: 231 bytes, fits in 256. */
  inbox_path(name, at, path);
}

/* 0 if nobody has `base` open for writing, else the errno that says so or
 * that kept the question from being asked (EAGAIN: a writer; EACCES: not
 * the owner; EINVAL: a file system without leases). The tracer's test
 * (supervisor/capture/file_state.cc, NobodyWrites): a read lease is granted
 * only on a file no fd has open for writing, the caller's own included.
 * Four calls: openat, two fcntl, close. No F_UNLCK: a lease belongs to its
 * open file description, and the last close of that description removes
 * it (fs/locks.c: __fput calls locks_remove_file, which drops every lease
 * whose file it is). The fd is the description's only one unless another
 * thread forks between the open and the close: the child's copy (closed at
 * its exec, O_CLOEXEC, or its exit) then keeps the lease until then, and a
 * writer opening the file meanwhile waits for the lease break (the same
 * break that a writer inside the window between the two fcntl met
 * before). */
static int nobody_writes(int parent, const char* base) {
  long fd = shim_own_syscall(SYS_openat, parent, (long)base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, 0, 0);
  if (fd < 0) return (int)-fd;
  /* A writer that opens the file while the lease stands breaks it, and the
   * kernel signals the lease's holder: this process, the host. SIGIO, the
   * default, terminates a program that does not handle it (session 19: a
   * thread appending to a file another thread unlinked died of it); SIGURG
   * is ignored by default (Go's runtime, which uses it, takes a spare one
   * in its stride). */
  shim_own_syscall(SYS_fcntl, fd, F_SETSIG, SIGURG, 0, 0, 0);
  long rc = shim_own_syscall(SYS_fcntl, fd, F_SETLEASE, F_RDLCK, 0, 0, 0);
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  return rc == 0 ? 0 : (int)-rc;
}

int shim_pre_image_link(struct shim_call* c, int parent, const char* base, char* name, size_t* name_len) {
  char path[PATH_MAX + SHIM_PENDING_NAME_MAX];
  int writers = nobody_writes(parent, base);
  if (writers != 0) return writers;
  for (int i = 0; i < SHIM_PENDING_NAME_TRIES; ++i) {
    next_name(c, name, name_len, path);
    long rc = shim_own_syscall(SYS_linkat, parent, (long)base, shim_config.pending_fd, (long)path, 0, 0);
    if (rc == 0) return 0;
    if (rc != -EEXIST) return (int)-rc;
  }
  return EEXIST;
}

/* Copies [off, end) (end < 0: to end of file) by pread and pwrite at the
 * same offsets. Retried on EINTR; a short write is continued. 0 or an
 * errno. */
static int copy_by_read(int src, int dst, int64_t off, int64_t end) {
  char buf[16384];
  for (;;) {
    long want = (long)sizeof buf;
    if (end >= 0 && end - off < want) want = (long)(end - off);
    if (want == 0) return 0;
    long got = shim_own_syscall(SYS_pread64, src, (long)buf, want, off, 0, 0);
    if (got == -EINTR) continue;
    if (got < 0) return (int)-got;
    if (got == 0) return 0;
    long done = 0;
    while (done < got) {
      long put = shim_own_syscall(SYS_pwrite64, dst, (long)(buf + done), got - done, off + done, 0, 0);
      if (put == -EINTR) continue;
      if (put < 0) return (int)-put;
      if (put == 0) return EIO;
      done += put;
    }
    off += got;
  }
}

/* Copies [off, end) (end < 0: to end of file) to the same offsets of dst. */
static int copy_range(int src, int dst, int64_t off, int64_t end) {
  int64_t in = off, out = off;
  int got_end = 0;
  for (;;) {
    long want = 1L << 30;
    if (end >= 0 && end - in < want) want = (long)(end - in);
    if (want == 0) return 0;
    long got = shim_own_syscall(SYS_copy_file_range, src, (long)&in, dst, (long)&out, want, 0);
    if (got == -EINTR) continue;
    if (got == 0) {
      got_end = 1;
      break;
    }
    if (got < 0) {
      if (got == -EXDEV || got == -EINVAL || got == -ENOSYS || got == -EOPNOTSUPP) break;
      return (int)-got;
    }
  }
  /* A copy_file_range that copied something and then said 0 reached the
   * end. One that was refused, or said 0 at once (a file system that does
   * not copy this way reports 0 before the end), leaves the rest to read and
   * write. */
  if (in > off && got_end) return 0;
  return copy_by_read(src, dst, in, end);
}

/* Copies the content of src (the shim's own fd: its offset is ours to
 * move) with its holes: only the data segments SEEK_DATA and SEEK_HOLE
 * name are copied, and the copy is given src's size at the end, so that a
 * sparse file's pre-image takes the disk its data takes (docs/format.md,
 * "Holes"). A file system that cannot tell (EINVAL) is copied whole. */
static int copy_content(int src, int dst) {
  int64_t off = 0;
  for (;;) {
    long data = shim_own_syscall(SYS_lseek, src, (long)off, SEEK_DATA, 0, 0, 0);
    if (data == -ENXIO) break; /* no data past off: a hole up to the end */
    if (data < 0) return off == 0 ? copy_range(src, dst, 0, -1) : (int)-data;
    long hole = shim_own_syscall(SYS_lseek, src, data, SEEK_HOLE, 0, 0, 0);
    if (hole < 0) return (int)-hole;
    int err = copy_range(src, dst, data, hole);
    if (err != 0) return err;
    off = hole;
  }
  long size = shim_own_syscall(SYS_lseek, src, 0, SEEK_END, 0, 0, 0);
  if (size < 0) return (int)-size;
  long rc;
  do rc = shim_own_syscall(SYS_ftruncate, dst, size, 0, 0, 0, 0);
  while (rc == -EINTR);
  return rc < 0 ? (int)-rc : 0;
}

int shim_pre_image_copy_fd(struct shim_call* c, int src, char* name, size_t* name_len) {
  char path[PATH_MAX + SHIM_PENDING_NAME_MAX];
  long dst = -EEXIST;
  for (int i = 0; i < SHIM_PENDING_NAME_TRIES && dst == -EEXIST; ++i) {
    next_name(c, name, name_len, path);
    dst = shim_own_syscall(SYS_openat, shim_config.pending_fd, (long)path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600,
                           0, 0);
  }
  if (dst < 0) return (int)-dst;
  int err = copy_content(src, (int)dst);
  shim_own_syscall(SYS_close, dst, 0, 0, 0, 0, 0);
  if (err != 0) shim_own_syscall(SYS_unlinkat, shim_config.pending_fd, (long)path, 0, 0, 0, 0);
  return err;
}

/* Opens `base` under `parent` to read its content: no symlink followed, no
 * blocking on a FIFO swapped in, and its atime left alone (O_NOATIME, which
 * only the file's owner may ask: else without it). */
static long open_to_read(int parent, const char* base) {
  const long flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  long fd = shim_own_syscall(SYS_openat, parent, (long)base, flags | O_NOATIME, 0, 0, 0);
  if (fd == -EPERM) fd = shim_own_syscall(SYS_openat, parent, (long)base, flags, 0, 0, 0);
  return fd;
}

int shim_pre_image_copy_at(struct shim_call* c, int parent, const char* base, char* name, size_t* name_len) {
  long src = open_to_read(parent, base);
  if (src < 0) return (int)-src;
  int err = shim_pre_image_copy_fd(c, (int)src, name, name_len);
  shim_own_syscall(SYS_close, src, 0, 0, 0, 0, 0);
  return err;
}

/* Whether `size` bytes go inside a CALL: no more than GUARD_SHIM_INLINE_MAX,
 * nor than a sixteenth of the ring, so that a record of them never waits
 * long for room. */
static int fits_inline(uint64_t size) {
  return size <= GUARD_SHIM_INLINE_MAX && size <= shim_config.ring.capacity / 16;
}

int shim_pre_image_keep_fd(struct shim_call* c, int fd, uint64_t size, struct shim_strings* s, char* name,
                           size_t* name_len) {
  if (!fits_inline(size)) return shim_pre_image_copy_fd(c, fd, name, name_len);
  s->has_inline = 1;
  s->inline_fd = fd;
  s->inline_size = size;
  s->spill_name = name;
  *name_len = 0;
  return 0;
}

int shim_pre_image_keep_at(struct shim_call* c, int parent, const char* base, uint64_t size, struct shim_strings* s,
                           char* name, size_t* name_len) {
  if (!fits_inline(size)) return shim_pre_image_copy_at(c, parent, base, name, name_len);
  long fd = open_to_read(parent, base);
  if (fd < 0) return (int)-fd;
  int err = shim_pre_image_keep_fd(c, (int)fd, size, s, name, name_len);
  s->inline_fd_owned = 1;
  return err;
}

void shim_pre_image_keep_done(struct shim_strings* s) {
  if (s->has_inline && s->inline_fd_owned) shim_own_syscall(SYS_close, s->inline_fd, 0, 0, 0, 0, 0);
  s->has_inline = 0;
  s->inline_fd_owned = 0;
}

long shim_pre_image_fill(void* arg, unsigned char* to, uint32_t room) {
  struct shim_inline_source* src = (struct shim_inline_source*)arg;
  uint64_t got = 0;
  while (got < room) {
    long n = shim_own_syscall(SYS_pread64, src->fd, (long)(to + got), (long)(room - got), (long)got, 0, 0);
    if (n == -EINTR) continue;
    if (n < 0) {
      src->err = (int)-n;
      return n;
    }
    if (n == 0) break;
    got += (uint64_t)n;
    /* A read that stops at the size its lstat said, asked for a byte more
     * (room is size + 1), was short: the end of the file. No second read
     * to hear it say 0. */
    if (got == src->size && got < room) break;
  }
  if (got != src->size) {
    src->err = ESTALE;
    return -ESTALE;
  }
  return (long)got;
}

void shim_pre_image_drop(const char* name) {
  char path[PATH_MAX + SHIM_PENDING_NAME_MAX];
  inbox_path(name, strnlen(name, SHIM_PENDING_NAME_MAX - 1), path);
  shim_own_syscall(SYS_unlinkat, shim_config.pending_fd, (long)path, 0, 0, 0, 0);
}
