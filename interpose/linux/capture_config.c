#include "interpose/linux/capture_config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "common/shim_interface.h"
#include "interpose/linux/pre_image.h"
#include "interpose/linux/shim_hello.h"
#include "interpose/linux/shim_protocol.h"
#include "interpose/linux/syscall_stub.h"
#include "interpose/env_find.h"

struct shim_config shim_config;

/* Copies an absolute path without a trailing slash (but "/") into `out`. */
static int copy_abs(const char* value, char* out, size_t cap, size_t* len) {
  if (value == NULL || value[0] != '/') return -1;
  size_t n = strlen(value);
  if (n >= cap || n > 4095) return -1;
  while (n > 1 && value[n - 1] == '/') --n;
  memcpy(out, value, n);
  out[n] = '\0';
  *len = n;
  return 0;
}

/* The device (and the mount id) of `dir`, followed if a symlink. 0, or -1
 * when it cannot be had: a kernel without STATX_MNT_ID (before 5.8) leaves
 * the capture off, since every path's place would be unsure. */
static int identify(const char* dir, uint64_t* dev, uint64_t* mnt_id, uint64_t* ino) {
  struct statx stx;
  long rc = shim_own_syscall(SYS_statx, AT_FDCWD, (long)dir, 0, STATX_MNT_ID | STATX_INO, (long)&stx, 0);
  if (rc != 0 || !(stx.stx_mask & STATX_MNT_ID)) return -1;
  *dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  if (mnt_id != NULL) *mnt_id = stx.stx_mnt_id;
  if (ino != NULL) *ino = stx.stx_ino;
  return 0;
}

/* Maps /dev/shm/<name> and attaches the producer to it. */
static int map_ring(const char* name) {
  if (name == NULL || *name == '\0' || strlen(name) > 200 || strchr(name, '/') != NULL) return -1;
  char path[256] = "/dev/shm/";
  memcpy(path + 9, name, strlen(name) + 1);
  long fd = shim_own_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0, 0, 0);
  if (fd < 0) return -1;
  struct stat st;
  long rc = shim_own_syscall(SYS_fstat, fd, (long)&st, 0, 0, 0, 0);
  /* The segment's identity, for the handshake: a ring of the process's own
   * making under the name would map as well (shim_hello.h). */
  struct statx stx;
  if (rc == 0) rc = shim_own_syscall(SYS_statx, fd, (long)"", AT_EMPTY_PATH, STATX_INO, (long)&stx, 0);
  if (rc == 0) {
    shim_config.ring_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    shim_config.ring_ino = stx.stx_ino;
  }
  long base = -1;
  if (rc == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    base = shim_own_syscall(SYS_mmap, 0, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  if (base < 0 && base >= -4095) return -1;
  if (base == -1) return -1;
  if (guard_ring_producer_init(&shim_config.ring, (void*)base, (size_t)st.st_size) != 0) {
    shim_own_syscall(SYS_munmap, base, st.st_size, 0, 0, 0, 0);
    return -1;
  }
  /* The pages it writes into leave the process's resident set behind it
   * (docs/ring.md, "Pages a producer gives back"). */
  shim_config.ring.give_back_bytes = GUARD_RING_GIVE_BACK_BYTES;
  return 0;
}

/* `v` in decimal at `out` (at most 20 bytes, no NUL); its length. */
static size_t put_decimal(char* out, unsigned long v) {
  char digits[24];
  size_t n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

/* The inbox fd `fd`, which this process did not inherit (a parent closed
 * it before the exec: Python's subprocess closes every fd it does not
 * pass), taken again from the parent, which is of the session and in its
 * namespace: /proc/PPID/fd/FD reopened (O_PATH) is the same directory on
 * the same mount, and goes back at its number, inheritable, as if never
 * closed. Whatever it is, the handshake holds its identity to the truth.
 * 0, or -1 when the parent has none. */
static int inherit_from_parent(int fd) {
  long ppid = shim_own_syscall(SYS_getppid, 0, 0, 0, 0, 0, 0);
  if (ppid <= 0) return -1;
  char path[64] = "/proc/";
  size_t at = 6;
  at += put_decimal(path + at, (unsigned long)ppid);
  memcpy(path + at, "/fd/", 4);
  at += 4;
  at += put_decimal(path + at, (unsigned long)fd);
  path[at] = '\0';
  long got = shim_own_syscall(SYS_openat, AT_FDCWD, (long)path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
  if (got < 0) return -1;
  long rc = shim_own_syscall(SYS_dup3, got, fd, 0, 0, 0, 0);
  shim_own_syscall(SYS_close, got, 0, 0, 0, 0, 0);
  return rc == fd ? 0 : -1;
}

void shim_config_load(char* const* envp) {
  struct shim_config* c = &shim_config;
  /* Read first (their names and meanings are frozen in every protocol):
   * without a tracer, a shim that cannot capture still has to follow the
   * policy (capture_alone.h). */
  const char* alone = shim_env_find(envp, GUARD_ENV_SHIM_ALONE);
  c->alone = alone != NULL && strcmp(alone, "1") == 0;
  const char* policy = shim_env_find(envp, GUARD_ENV_ON_CAPTURE_FAILURE);
  c->block_on_failure = !(policy != NULL && strcmp(policy, "allow") == 0);
  /* Then the protocol: a shim that does not speak guard's reads nothing
   * else of its environment (shim_protocol.h). */
  if (!shim_protocol_agrees(envp, c->alone, c->block_on_failure)) {
    c->protocol_refused = 1;
    return;
  }
  const char* session = shim_env_find(envp, GUARD_ENV_SESSION);
  if (session == NULL || *session == '\0' || strlen(session) >= sizeof c->session || strchr(session, '/')) return;
  if (copy_abs(shim_env_find(envp, GUARD_ENV_SHIM_PENDING), c->pending, sizeof c->pending, &c->pending_len) != 0) return;
  if (copy_abs(shim_env_find(envp, GUARD_ENV_ROOT), c->root, sizeof c->root, &c->root_len) != 0) return;
  if (copy_abs(shim_env_find(envp, GUARD_ENV_STATE_DIR), c->state, sizeof c->state, &c->state_len) != 0) return;
  if (identify(c->root, &c->root_dev, &c->root_mnt_id, &c->root_ino) != 0) return;
  if (identify(c->state, &c->state_dev, &c->state_mnt_id, NULL) != 0) return;
  const char* inbox = shim_env_find(envp, GUARD_ENV_SHIM_INBOX);
  if (inbox != NULL && copy_abs(inbox, c->inbox, sizeof c->inbox, &c->inbox_len) != 0) return;
  const char* config_dir = shim_env_find(envp, GUARD_ENV_CONFIG_DIR);
  if (config_dir != NULL && copy_abs(config_dir, c->config_dir, sizeof c->config_dir, &c->config_dir_len) != 0) return;
  const char* sealed = shim_env_find(envp, GUARD_ENV_STATE_SEALED);
  if (sealed != NULL && strcmp(sealed, "1") == 0) {
    struct statfs fs;
    c->state_sealed = shim_own_syscall(SYS_statfs, (long)c->state, (long)&fs, 0, 0, 0, 0) == 0 &&
                      (fs.f_flags & ST_RDONLY) != 0 && c->state_mnt_id != c->root_mnt_id;
  }
  shim_pre_image_init();
  c->session_len = strlen(session);
  memcpy(c->session, session, c->session_len + 1);
  /* Under auto the inboxes are hidden from the command and its own is an
   * inherited directory fd (GUARD_SHIM_INBOX_FD; docs/shim.md, "The inbox
   * by fd"); else the pending area is named by its path at each capture.
   * Either is checked once here, and the handshake holds its identity to
   * the supervisor's (a process that closed the fd, as Python's subprocess
   * does, finds none: the tracer then takes every call). A host that
   * closes the fd later and puts another directory at its number, with
   * the inbox's shard directories in it, hides its own pre-images, which
   * any process can do through the stub (docs/security.md). */
  c->pending_fd = AT_FDCWD;
  const char* inbox_fd = shim_env_find(envp, GUARD_ENV_SHIM_INBOX_FD);
  if (inbox_fd != NULL) {
    long fd = 0;
    for (const char* d = inbox_fd; *d != '\0'; ++d) {
      if (*d < '0' || *d > '9' || fd > 65535) return;
      fd = fd * 10 + (*d - '0');
    }
    if (*inbox_fd == '\0' || fd < 3 || fd > 65535) return;
    struct statx stx;
    long rc = shim_own_syscall(SYS_statx, fd, (long)"", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, (long)&stx, 0);
    if (rc == -EBADF && inherit_from_parent((int)fd) == 0) {
      rc = shim_own_syscall(SYS_statx, fd, (long)"", AT_EMPTY_PATH, STATX_TYPE | STATX_INO, (long)&stx, 0);
    }
    if (rc != 0 || !S_ISDIR(stx.stx_mode)) return;
    c->pending_fd = (int)fd;
    c->pending_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    c->pending_ino = stx.stx_ino;
  } else {
    long dfd = shim_own_syscall(SYS_openat, AT_FDCWD, (long)c->pending, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0, 0);
    if (dfd < 0) return;
    shim_own_syscall(SYS_close, dfd, 0, 0, 0, 0, 0);
    if (identify(c->pending, &c->pending_dev, NULL, &c->pending_ino) != 0) return;
  }
  if (map_ring(shim_env_find(envp, GUARD_ENV_SHIM_RING)) != 0) return;
  /* Believed only once a tracer agrees (shim_hello.h): who answers decides
   * whether one stands behind the shim, never the environment. */
  switch (shim_hello_exchange(c)) {
    case SHIM_HELLO_AGREED:
      c->alone = 0;
      break;
    case SHIM_HELLO_REFUSED:
      c->alone = 0; /* the tracer stops every call the shim leaves */
      return;
    case SHIM_HELLO_NOBODY:
      /* Whatever stops a call, if anything does, sees the shim's too. */
      shim_stub_leave();
      if (!c->alone) return; /* a tracer was expected, and none answered */
      break;
  }
  c->ready = 1;
}
