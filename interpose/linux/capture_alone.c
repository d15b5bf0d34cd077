#include "interpose/linux/capture_alone.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/exec_kind.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/process_name.h"
#include "interpose/linux/syscall_stub.h"

extern char** environ;

/* The classes whose call changes a file (shim_capture.h). */
static int changes_files(enum shim_class cls) {
  switch (cls) {
    case SHIM_NOTHING:
    case SHIM_TMPFILE:
    case SHIM_FD_NO_CAPTURE:
    case SHIM_EXEC:
    case SHIM_PASS: return 0;
    default: return 1;
  }
}

static size_t append(char* buf, size_t at, size_t cap, const char* s, size_t n) {
  if (at >= cap) return at;
  if (n > cap - at) n = cap - at;
  memcpy(buf + at, s, n);
  return at + n;
}

static void say(const char* a, size_t an, const char* b, size_t bn, const char* c) {
  /* Refused by protocol, the shim is not the one who may speak: guard says
   * it, once for the session (shim_protocol.h). */
  if (shim_config.protocol_refused) return;
  char line[512];
  size_t at = append(line, 0, sizeof line, "guard: ", 7);
  const char* comm = NULL;
  size_t comm_len = shim_process_name(&comm);
  if (comm_len != 0) {
    at = append(line, at, sizeof line, comm, comm_len);
    at = append(line, at, sizeof line, ": ", 2);
  }
  at = append(line, at, sizeof line, a, an);
  at = append(line, at, sizeof line, b, bn);
  at = append(line, at, sizeof line, c, strlen(c));
  if (at == sizeof line) line[at - 1] = '\n';
  shim_own_syscall(SYS_write, STDERR_FILENO, (long)line, (long)at, 0, 0, 0);
}

/* One line per process image: a program that misses a thousand calls
 * would otherwise bury its own output. A fork child inherits the flag. */
static int warned_miss;

void shim_alone_settle(struct shim_call* c) {
  if (!shim_config.alone || c->route != SHIM_ROUTE_REAL || c->recorded || !changes_files(c->cls)) return;
  /* The capture set fail_errno when a pre-image could not be saved (a
   * full disk): a failure of the capture, not a call it cannot make. */
  int unsaved = c->fail_errno != 0;
  static const char kMiss[] = "--mode preload cannot capture this ";
  static const char kUnsaved[] = "cannot save the pre-image for this ";
  const char* what = unsaved ? kUnsaved : kMiss;
  size_t what_len = unsaved ? sizeof kUnsaved - 1 : sizeof kMiss - 1;
  if (shim_config.block_on_failure) {
    c->route = SHIM_ROUTE_FAIL;
    if (!unsaved) c->fail_errno = EPERM;
    if (!warned_miss) {
      say(what, what_len, c->entry, strlen(c->entry),
          unsaved ? "; refused (--on-capture-failure=block)\n"
                  : "; refused (--on-capture-failure=block; --mode auto captures it)\n");
    }
  } else {
    c->route = SHIM_ROUTE_STUB;
    c->fail_errno = 0;
    if (!warned_miss) say(what, what_len, c->entry, strlen(c->entry), "; it ran unrecorded (--on-capture-failure=allow)\n");
  }
  warned_miss = 1;
}

int shim_miss_unseen(const char* entry, const char* why) {
  int block = shim_config.block_on_failure;
  if (!warned_miss) {
    say(why, strlen(why), entry, strlen(entry),
        block ? " cannot be captured; refused (--on-capture-failure=block)\n"
              : " cannot be captured; it ran unrecorded (--on-capture-failure=allow)\n");
  }
  warned_miss = 1;
  return block ? EPERM : 0;
}

void shim_alone_refused(const char* path, size_t len, int err) {
  if (warned_miss) return;
  warned_miss = 1;
  static const char kWhat[] = "cannot save the pre-image of ";
  say(kWhat, sizeof kWhat - 1, path, len,
      err == ENOSPC || err == EDQUOT ? " (no space left); the change was refused (--on-capture-failure=block)\n"
                                     : "; the change was refused (--on-capture-failure=block)\n");
}

/* Reads the first bytes of `path`; their count, or -1. */
static long read_head(const char* path, unsigned char* head, size_t cap) {
  long fd = shim_own_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0, 0, 0);
  if (fd < 0) return -1;
  long n = shim_own_syscall(SYS_pread64, fd, (long)head, (long)cap, 0, 0, 0);
  shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
  return n;
}

/* The kind of `path`, a script's interpreter followed once. */
static enum guard_exec_kind kind_of(const char* path) {
  unsigned char head[GUARD_EXEC_HEAD];
  long n = read_head(path, head, sizeof head);
  if (n <= 0) return GUARD_EXEC_UNKNOWN;
  const char* interp = NULL;
  size_t interp_len = 0;
  enum guard_exec_kind kind = guard_exec_kind_of(head, (size_t)n, &interp, &interp_len);
  if (kind != GUARD_EXEC_SCRIPT) return kind;
  char ipath[PATH_MAX];
  if (interp_len >= sizeof ipath) return GUARD_EXEC_UNKNOWN;
  memcpy(ipath, interp, interp_len);
  ipath[interp_len] = '\0';
  n = read_head(ipath, head, sizeof head);
  if (n <= 0) return GUARD_EXEC_UNKNOWN;
  kind = guard_exec_kind_of(head, (size_t)n, &interp, &interp_len);
  return kind == GUARD_EXEC_SCRIPT ? GUARD_EXEC_UNKNOWN : kind;
}

static const char* path_variable(void) {
  if (environ == NULL) return NULL;
  for (char** e = environ; *e != NULL; ++e) {
    if (strncmp(*e, "PATH=", 5) == 0) return *e + 5;
  }
  return NULL;
}

/* The file execvp would run for `name` (only its first candidate that can
 * be opened: enough to tell its kind), into `out`. 0, or -1. */
static int search_path(const char* name, char* out, size_t cap) {
  const char* dirs = path_variable();
  if (dirs == NULL) dirs = "/bin:/usr/bin";
  size_t name_len = strlen(name);
  while (*dirs != '\0') {
    const char* end = strchr(dirs, ':');
    size_t len = end != NULL ? (size_t)(end - dirs) : strlen(dirs);
    if (len == 0) len = 1, dirs = "."; /* an empty entry is the cwd */
    if (len + 1 + name_len < cap) {
      memcpy(out, dirs, len);
      out[len] = '/';
      memcpy(out + len + 1, name, name_len + 1);
      if (shim_own_syscall(SYS_faccessat, AT_FDCWD, (long)out, X_OK, 0, 0, 0) == 0) return 0;
    }
    if (end == NULL) break;
    dirs = end + 1;
  }
  return -1;
}

void shim_alone_check_exec(const char* what, int search) {
  if (!shim_config.alone || what == NULL || *what == '\0') return;
  char found[PATH_MAX];
  const char* path = what;
  if (search && strchr(what, '/') == NULL) {
    if (search_path(what, found, sizeof found) != 0) return;
    path = found;
  }
  if (kind_of(path) != GUARD_EXEC_STATIC) return;
  static const char kWhat[] = "--mode preload cannot see ";
  say(kWhat, sizeof kWhat - 1, path, strlen(path),
      " (statically linked): its changes are not captured (--mode auto or trace captures them)\n");
}
