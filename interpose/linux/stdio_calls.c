/* fopen, fopen64, freopen, freopen64; fdopen, dprintf and vdprintf (and
 * their fortified forms), whose writes are glibc's own too. glibc's own open their file through
 * its internal __open, which no preload reaches (the tracer would stop it),
 * so for a mode that writes the shim makes the open itself, through its
 * capturing open (open_call.h), and builds the stream on the fd:
 *  - fopen: fdopen of the fd, with the mode's flags and its 'a' seek as
 *    glibc's fopen leaves them;
 *  - freopen (the stream keeps its identity, the same FILE*): glibc's own
 *    freopen on "/dev/null" read-only (an open the filter lets go) does all
 *    of freopen's work on the stream (the flush, its buffers, its list, its
 *    orientation, the fd number kept by dup3), then the captured fd is
 *    put in that number with dup3 and the stream's three access bits set
 *    as the real mode would have set them.
 * A stream's writes are glibc's internal __write, which the shim never
 * sees: its content is captured at the open (O_TRUNC or not) and its fd
 * is left unmarked (struct shim_call: writes_unseen).
 *
 * Left to glibc's own function (its open is the tracer's): a read-only mode
 * (nothing to capture: as cheap as without the shim), a mode glibc refuses,
 * freopen with a NULL path, ",ccs=" (a wide stream with a conversion) and
 * 'c' (no cancellation points), which fdopen cannot make, and a freopen of
 * a stream opened with 'm' (its mmap flag would give the read-only stream
 * of the first step glibc's mmap functions).
 *
 * fdopen and dprintf write through glibc's internal __write as well: an fd
 * the host opened for writing whose capture waits for its first write
 * (fd_marks.h) is captured when a stream is made on it or dprintf writes
 * to it, since that first write would go unseen. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/fd_marks.h"
#include "interpose/linux/interposer.h"
#include "interpose/linux/open_call.h"
#include "interpose/shim_process.h"
#include "interpose/stdio_mode.h"

SHIM_REAL_SLOT(fopen);
SHIM_REAL_SLOT(freopen);
SHIM_REAL_SLOT(fdopen);
SHIM_REAL_SLOT(vdprintf);
SHIM_REAL_SLOT(__vdprintf_chk);

/* glibc's other name of fdopen: the real one when the lookup cannot be
 * made (a signal handler that interrupted the shim's work). */
FILE* _IO_fdopen(int fd, const char* mode);
int __vdprintf_chk(int fd, int flag, const char* format, va_list ap);
int __dprintf_chk(int fd, int flag, const char* format, ...);

static FILE* real_fdopen(int fd, const char* mode) {
  __typeof__(&fdopen) real = SHIM_REAL(fdopen);
  return real != NULL ? real(fd, mode) : _IO_fdopen(fd, mode);
}

/* glibc's stream flags (libio/libio.h), stable since libio began: struct
 * _IO_FILE's _flags and _flags2 are in its public header, their bits not. */
#define SHIM_IO_NO_READS 0x0004
#define SHIM_IO_NO_WRITES 0x0008
#define SHIM_IO_IS_APPENDING 0x1000
#define SHIM_IO_ACCESS_BITS (SHIM_IO_NO_READS | SHIM_IO_NO_WRITES | SHIM_IO_IS_APPENDING)
#define SHIM_IO_FLAGS2_MMAP 1
#define SHIM_IO_FLAGS2_CLOEXEC 64

/* The access bits glibc's _IO_new_file_fopen gives a mode. */
static int access_bits(const struct shim_stdio_mode* m) {
  int bits;
  switch (m->fdopen_mode[0]) {
    case 'r': bits = SHIM_IO_NO_WRITES; break;
    case 'w': bits = SHIM_IO_NO_READS; break;
    default: bits = SHIM_IO_NO_READS | SHIM_IO_IS_APPENDING; break;
  }
  if (m->fdopen_mode[1] == '+') bits &= SHIM_IO_IS_APPENDING;
  return bits;
}

/* The shim's own close of an fd the host never had, errno kept. */
static void close_own(int fd) { shim_own_syscall(SYS_close, fd, 0, 0, 0, 0, 0); }

/* glibc's function, classified as before: a read-only open, which the
 * filter lets go, or a fallback to the tracer. */
static FILE* real_stdio(const char* entry, const char* path, const char* mode, FILE* stream, int flags) {
  __typeof__(&fopen) real_fopen = SHIM_REAL(fopen);
  __typeof__(&freopen) real_freopen = SHIM_REAL(freopen);
  struct shim_call c;
  int guarded = shim_begin(&c, entry);
  if (!guarded) SHIM_REENTERED(shim_reentered_open(entry, AT_FDCWD, path, flags), NULL);
  if (guarded) {
    shim_before_open(&c, AT_FDCWD, path, flags, 0666);
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) shim_capture_fell_back(&c);
    shim_proceed(&c);
  }
  FILE* f = NULL;
  if (stream == NULL ? real_fopen == NULL : real_freopen == NULL) {
    errno = ENOSYS;
  } else {
    f = stream == NULL ? real_fopen(path, mode) : real_freopen(path, mode, stream);
  }
  if (guarded) shim_finish(&c, f != NULL ? fileno(f) : -1);
  return f;
}

/* The captured open of a stream's file: the fd, unmarked, or -1. */
static int open_stream_file(const char* entry, const char* path, const struct shim_stdio_mode* m) {
  int fd = shim_open_call(entry, AT_FDCWD, path, m->flags, 0666, 1);
  if (fd < 0) return -1;
  /* A mark left on the number by a stream glibc closed (fclose closes
   * inside glibc, unseen) must not apply to this file. */
  if (!shim_process_is_borrowed()) shim_fd_clear(fd);
  /* glibc's "a" seeks to the end at the open (ftell then gives the size);
   * a failure but on a pipe fails the fopen. */
  if (m->seek_end && lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
    int err = errno;
    close_own(fd);
    errno = err;
    return -1;
  }
  return fd;
}

static FILE* stdio_fopen(const char* entry, const char* path, const char* mode) {
  struct shim_stdio_mode m;
  int valid = shim_stdio_mode_parse(mode, &m);
  if (!valid || m.real_only || (shim_stdio_mode_reads_only(&m) && SHIM_REAL(fopen) != NULL)) {
    return real_stdio(entry, path, mode, NULL, valid ? m.flags : O_RDONLY);
  }
  int saved = errno;
  int fd = open_stream_file(entry, path, &m);
  if (fd < 0) return NULL;
  FILE* f = real_fdopen(fd, m.fdopen_mode);
  if (f == NULL) {
    int err = errno;
    close_own(fd);
    errno = err;
    return NULL;
  }
  /* What fopen keeps of 'e' and 'm' and fdopen does not: a later freopen
   * dup3s with O_CLOEXEC, and reads through mmap. */
  if (m.cloexec) f->_flags2 |= SHIM_IO_FLAGS2_CLOEXEC;
  if (m.mmap) f->_flags2 |= SHIM_IO_FLAGS2_MMAP;
  errno = saved;
  return f;
}

/* The stream as a failed freopen leaves it: glibc's own freopen of a name
 * that cannot open ("": ENOENT, read-only, unstopped) closes its fd and
 * marks it closed, with the mode's 'e' and 'm' kept as the real one keeps
 * them; errno `err`. */
static FILE* fail_freopen(__typeof__(&freopen) real, const struct shim_stdio_mode* m, FILE* stream, int err) {
  char inner[4] = {'r', 0, 0, 0};
  int n = 1;
  if (m->cloexec) inner[n++] = 'e';
  if (m->mmap) inner[n++] = 'm';
  (void)real("", inner, stream);
  errno = err;
  return NULL;
}

static FILE* stdio_freopen(const char* entry, const char* path, const char* mode, FILE* stream) {
  __typeof__(&freopen) real = SHIM_REAL(freopen);
  struct shim_stdio_mode m;
  int valid = shim_stdio_mode_parse(mode, &m);
  /* A NULL path reopens the stream's own file by /proc/self/fd: glibc's,
   * whose open (with `w`, a truncation) the tracer captures. */
  if (!valid || path == NULL || real == NULL || m.real_only || shim_stdio_mode_reads_only(&m) ||
      (stream->_flags2 & SHIM_IO_FLAGS2_MMAP)) {
    return real_stdio(entry, path, mode, stream, valid ? m.flags : O_RDONLY);
  }
  int saved = errno;
  /* freopen flushes first (its failure ignored): what the stream holds
   * goes to its old file before the new one opens, truncated maybe (the
   * same file: the pre-image then holds it, as it would under glibc). */
  (void)fflush(stream);
  int fd = open_stream_file(entry, path, &m);
  if (fd < 0) return fail_freopen(real, &m, stream, errno);
  /* The stream's fd number was free (the host closed it first, as in
   * `close(1); freopen(F, "w", stdout)`) and the open took it: moved out
   * of the way, or glibc's dup3 of "/dev/null" below would close it. */
  if (fd == fileno(stream)) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    int err = errno;
    close_own(fd);
    if (moved < 0) return fail_freopen(real, &m, stream, err);
    fd = moved;
  }
  char inner[3] = {'r', m.cloexec ? 'e' : '\0', '\0'};
  if (real("/dev/null", inner, stream) == NULL) {
    int err = errno;
    close_own(fd);
    errno = err;
    return NULL; /* closed, as a failed freopen leaves it */
  }
  if ((stream->_flags & SHIM_IO_ACCESS_BITS) != SHIM_IO_NO_WRITES) {
    /* Not the glibc this was written for: its own function, whose open the
     * tracer captures (the first one's record stays: a pre-image of what
     * the file held, the same). */
    close_own(fd);
    errno = saved;
    return real_stdio(entry, path, mode, stream, m.flags);
  }
  int target = fileno(stream);
  /* The close-on-exec glibc chose for the number (its dup3, by the mode's
   * 'e' or one the stream had), kept for the file put there. */
  int fd_flags = fcntl(target, F_GETFD);
  long rc = shim_errno_result(shim_own_syscall(SYS_dup3, fd, target, (fd_flags > 0 && (fd_flags & FD_CLOEXEC)) ? O_CLOEXEC : 0,
                                               0, 0, 0));
  int err = errno;
  close_own(fd);
  if (rc < 0) return fail_freopen(real, &m, stream, err);
  if (!shim_process_is_borrowed()) shim_fd_clear(target);
  flockfile(stream);
  stream->_flags = (stream->_flags & ~SHIM_IO_ACCESS_BITS) | access_bits(&m);
  if (m.mmap) stream->_flags2 |= SHIM_IO_FLAGS2_MMAP;
  funlockfile(stream);
  errno = saved;
  return stream;
}

SHIM_EXPORT FILE* fopen(const char* path, const char* mode) { return stdio_fopen("fopen", path, mode); }
SHIM_EXPORT FILE* fopen64(const char* path, const char* mode) { return stdio_fopen("fopen64", path, mode); }

SHIM_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return stdio_freopen("freopen", path, mode, stream);
}

SHIM_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return stdio_freopen("freopen64", path, mode, stream);
}

/* A pending fd about to be written where the shim cannot see it: captured
 * now. 0, or the errno the call must fail with (the capture failed under
 * the "block" policy). */
static int unseen_writes_on(const char* entry, int fd) {
  if (!shim_fd_is_pending(fd)) return 0;
  struct shim_call c;
  if (!shim_begin(&c, entry)) return 0;
  shim_before_dup(&c, fd); /* a pending fd: the first-change capture */
  shim_proceed(&c);
  return c.route == SHIM_ROUTE_FAIL ? c.fail_errno : 0;
}

SHIM_EXPORT FILE* fdopen(int fd, const char* mode) {
  int err = unseen_writes_on("fdopen", fd);
  if (err != 0) {
    errno = err;
    return NULL;
  }
  return real_fdopen(fd, mode);
}

static int vdprintf_as(const char* entry, int fd, const char* format, va_list ap) {
  int err = unseen_writes_on(entry, fd);
  __typeof__(&vdprintf) real = SHIM_REAL(vdprintf);
  if (err != 0 || real == NULL) {
    errno = err != 0 ? err : ENOSYS;
    return -1;
  }
  return real(fd, format, ap);
}

static int vdprintf_chk_as(const char* entry, int fd, int flag, const char* format, va_list ap) {
  int err = unseen_writes_on(entry, fd);
  __typeof__(&__vdprintf_chk) real = SHIM_REAL(__vdprintf_chk);
  if (err != 0 || real == NULL) {
    errno = err != 0 ? err : ENOSYS;
    return -1;
  }
  return real(fd, flag, format, ap);
}

SHIM_EXPORT int vdprintf(int fd, const char* format, va_list ap) { return vdprintf_as("vdprintf", fd, format, ap); }

SHIM_EXPORT int dprintf(int fd, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vdprintf_as("dprintf", fd, format, ap);
  va_end(ap);
  return n;
}

SHIM_EXPORT int __vdprintf_chk(int fd, int flag, const char* format, va_list ap) {
  return vdprintf_chk_as("__vdprintf_chk", fd, flag, format, ap);
}

SHIM_EXPORT int __dprintf_chk(int fd, int flag, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vdprintf_chk_as("__dprintf_chk", fd, flag, format, ap);
  va_end(ap);
  return n;
}
