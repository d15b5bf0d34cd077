/* fd_tricks MODE ...: changes made through an open file rather than through
 * its name (issue 11, items 1, 10 and 11). Each mode exits 0 when every call
 * it made succeeded, else prints the failing call and exits 1.
 *
 *   fchmod FILE MODE        open FILE read-only, fchmod(fd, MODE (octal))
 *   write-held FILE TEXT    open FILE read-write, unlink it, then write TEXT
 *                           through the fd held from before the unlink
 *   reopen FILE TEXT        open FILE read-only, unlink it, open
 *                           /proc/self/fd/N with O_WRONLY|O_TRUNC, write TEXT
 *   reopen-opath FILE TEXT  the same from an O_PATH fd
 *   reopen-other FILE TEXT  open FILE read-only, unlink it; a child opens the
 *                           parent's /proc/PPID/fd/N for writing, O_TRUNC
 *   tmpfile DIR NAME TEXT HOW
 *                           open(DIR, O_TMPFILE), write TEXT, fchmod 0640,
 *                           then give it the name DIR/NAME: HOW is "empty-path"
 *                           (linkat AT_EMPTY_PATH) or "proc" (linkat of
 *                           /proc/self/fd/N with AT_SYMLINK_FOLLOW)
 *   created NEW TEXT MODE   create NEW (O_CREAT|O_EXCL, 0600), write TEXT,
 *                           fchmod(fd, MODE), fchown(fd, -1, -1), close
 *   stale-created NEW OLD MODE
 *                           create NEW (O_CREAT|O_EXCL) as fd N, close N by
 *                           a raw system call (syscall(2): the shim's mark
 *                           of N stays), open OLD read-only by a raw openat,
 *                           which gets N again, and fchmod(N, MODE) through
 *                           libc: a change of OLD, which has a past
 *   created-over NEW OLD MODE
 *                           create NEW (O_CREAT|O_EXCL), write to it, rename
 *                           it over OLD (RENAME_EXCHANGE with OLD if MODE
 *                           starts with 'x', then MODE without the 'x'),
 *                           fchmod(fd, MODE): the inode changed is the new
 *                           one, whatever name it has now
 *   created-closed NEW OLD MODE
 *                           create NEW (O_CREAT|O_EXCL) as fd N, close N by
 *                           close_range(2) (not interposed: the mark stays),
 *                           open OLD read-only through libc (the shim's
 *                           read-only fast path), which gets N, and
 *                           fchmod(N, MODE): a change of OLD
 *   created-vfork NEW OLD MODE
 *                           create NEW as fd N; a vfork child closes N by
 *                           close_range, opens OLD read-only (N), fchmods it
 *                           to MODE and _exits; the parent fchmods N (NEW) to
 *                           MODE too
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char* what) {
  perror(what);
  return 1;
}

static int write_text(int fd, const char* text) {
  size_t n = strlen(text);
  return write(fd, text, n) == (ssize_t)n ? 0 : fail("write");
}

static int open_and_unlink(const char* file, int flags) {
  int fd = open(file, flags);
  if (fd < 0) return -1;
  if (unlink(file) != 0) return -1;
  return fd;
}

static int reopen(const char* link, const char* text) {
  int w = open(link, O_WRONLY | O_TRUNC);
  if (w < 0) return fail(link);
  return write_text(w, text);
}

static int reopen_self(const char* file, const char* text, int flags) {
  int fd = open_and_unlink(file, flags);
  if (fd < 0) return fail(file);
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  return reopen(link, text);
}

static int reopen_other(const char* file, const char* text) {
  int fd = open_and_unlink(file, O_RDONLY);
  if (fd < 0) return fail(file);
  pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    close(fd);  // the child writes through its parent's fd, not its own
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)getppid(), fd);
    _exit(reopen(link, text));
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int tmpfile_link(const char* dir, const char* name, const char* text, const char* how) {
  int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
  if (fd < 0) return fail("open O_TMPFILE");
  if (write_text(fd, text) != 0) return 1;
  if (fchmod(fd, 0640) != 0) return fail("fchmod");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (strcmp(how, "empty-path") == 0) {
    if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) != 0) return fail("linkat AT_EMPTY_PATH");
    return 0;
  }
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, link, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0) return fail("linkat /proc/self/fd");
  return 0;
}

/* A new file made by O_CREAT|O_EXCL (what the shim marks created), or -1
 * after saying why. */
static int make_new(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) perror(path);
  return fd;
}

static mode_t octal(const char* mode) { return (mode_t)strtol(mode, NULL, 8); }

static int created(const char* path, const char* text, const char* mode) {
  int fd = make_new(path);
  if (fd < 0) return 1;
  if (write_text(fd, text) != 0) return 1;
  if (fchmod(fd, octal(mode)) != 0) return fail("fchmod");
  if (fchown(fd, (uid_t)-1, (gid_t)-1) != 0) return fail("fchown");
  return close(fd) == 0 ? 0 : fail("close");
}

static int stale_created(const char* made, const char* old, const char* mode) {
  int fd = make_new(made);
  if (fd < 0) return 1;
  if (syscall(SYS_close, fd) != 0) return fail("raw close");
  long again = syscall(SYS_openat, AT_FDCWD, old, O_RDONLY | O_CLOEXEC);
  if (again < 0) return fail(old);
  if (again != fd) {
    fprintf(stderr, "stale-created: the raw openat got fd %ld, not %d\n", again, fd);
    return 1;
  }
  return fchmod(fd, octal(mode)) == 0 ? 0 : fail("fchmod");
}

static int created_over(const char* made, const char* old, const char* mode) {
  int fd = make_new(made);
  if (fd < 0) return 1;
  if (write_text(fd, "made\n") != 0) return 1;
  if (mode[0] == 'x') {
    if (syscall(SYS_renameat2, AT_FDCWD, made, AT_FDCWD, old, 2 /* RENAME_EXCHANGE */) != 0) return fail("exchange");
    ++mode;
  } else if (rename(made, old) != 0) {
    return fail("rename");
  }
  if (fchmod(fd, octal(mode)) != 0) return fail("fchmod");
  return close(fd) == 0 ? 0 : fail("close");
}

static int created_closed(const char* made, const char* old, const char* mode) {
  int fd = make_new(made);
  if (fd < 0) return 1;
  if (syscall(SYS_close_range, fd, fd, 0) != 0) return fail("close_range");
  int again = open(old, O_RDONLY);
  if (again != fd) {
    fprintf(stderr, "created-closed: open got fd %d, not %d\n", again, fd);
    return 1;
  }
  return fchmod(fd, octal(mode)) == 0 ? 0 : fail("fchmod");
}

static int created_vfork(const char* made, const char* old, const char* mode) {
  int fd = make_new(made);
  if (fd < 0) return 1;
  mode_t m = octal(mode);
  pid_t child = vfork();
  if (child < 0) return fail("vfork");
  if (child == 0) {
    if (syscall(SYS_close_range, fd, fd, 0) != 0) _exit(3);
    int again = open(old, O_RDONLY);
    if (again != fd) _exit(4);
    _exit(fchmod(fd, m) == 0 ? 0 : 5);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "created-vfork: child status %d\n", status);
    return 1;
  }
  return fchmod(fd, m) == 0 ? 0 : fail("fchmod");
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "fchmod") == 0) {
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) return fail(argv[2]);
    return fchmod(fd, octal(argv[3])) == 0 ? 0 : fail("fchmod");
  }
  if (argc == 4 && strcmp(argv[1], "write-held") == 0) {
    int fd = open_and_unlink(argv[2], O_RDWR);
    if (fd < 0) return fail(argv[2]);
    if (ftruncate(fd, 0) != 0) return fail("ftruncate");
    return write_text(fd, argv[3]);
  }
  if (argc == 4 && strcmp(argv[1], "reopen") == 0) return reopen_self(argv[2], argv[3], O_RDONLY);
  if (argc == 4 && strcmp(argv[1], "reopen-opath") == 0) return reopen_self(argv[2], argv[3], O_PATH);
  if (argc == 4 && strcmp(argv[1], "reopen-other") == 0) return reopen_other(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "created") == 0) return created(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "stale-created") == 0) return stale_created(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "created-over") == 0) return created_over(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "created-closed") == 0) return created_closed(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "created-vfork") == 0) return created_vfork(argv[2], argv[3], argv[4]);
  if (argc == 6 && strcmp(argv[1], "tmpfile") == 0) return tmpfile_link(argv[2], argv[3], argv[4], argv[5]);
  fprintf(stderr, "usage: see the comment at the top of fd_tricks.c\n");
  return 2;
}
