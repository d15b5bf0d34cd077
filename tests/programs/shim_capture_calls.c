// The calls the shim captures, one scenario per argv[1], run with the shim
// preloaded and a ring (tests/e2e/shim_capture_test.cc drains it). Each
// scenario checks what the program itself can see (results, errno,
// contents) and exits non-zero when it is wrong, naming the step.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char* step) {
  fprintf(stderr, "shim_capture_calls: %s: %s\n", step, strerror(errno));
  return 1;
}

struct named_unlink {
  const char* name;
  const char* path;
  int rc;
};

static void* rename_self_and_unlink(void* arg) {
  struct named_unlink* u = arg;
  u->rc = prctl(PR_SET_NAME, u->name) == 0 && unlink(u->path) == 0 ? 0 : -1;
  return NULL;
}

static int write_all(int fd, const char* s) {
  size_t n = strlen(s);
  return write(fd, s, n) == (ssize_t)n ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* what = argv[1];
  const char* a = argv[2];
  const char* b = argc > 3 ? argv[3] : NULL;
  if (strcmp(what, "unlinkat-n") == 0) {
    /* rm -rf's way: unlinkat(dirfd, "fI") of files f0 .. f(N-1) in DIR,
     * for a count of the calls each delete costs (strace -c). */
    int dir = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || b == NULL) return fail("open the directory");
    int n = atoi(b);
    for (int i = 0; i < n; ++i) {
      char name[32];
      snprintf(name, sizeof name, "f%d", i);
      if (unlinkat(dir, name, 0) != 0) return fail("unlinkat");
    }
    close(dir);
  } else if (strcmp(what, "unlink") == 0) {
    for (int i = 2; i < argc; ++i) {
      if (unlink(argv[i]) != 0) return fail("unlink");
    }
  } else if (strcmp(what, "unlink-missing") == 0) {
    errno = 0;
    if (unlink(a) != -1 || errno != ENOENT) return fail("unlink of a missing file");
  } else if (strcmp(what, "trunc") == 0) {
    int fd = open(a, O_WRONLY | O_TRUNC);
    if (fd < 0) return fail("open O_TRUNC");
    if (write_all(fd, "new\n") != 0 || close(fd) != 0) return fail("write");
  } else if (strcmp(what, "rdwr-write") == 0) {
    int fd = open(a, O_RDWR);
    if (fd < 0) return fail("open O_RDWR");
    if (write_all(fd, "XY") != 0) return fail("first write");
    if (write_all(fd, "Z") != 0) return fail("second write");
    if (close(fd) != 0) return fail("close");
  } else if (strcmp(what, "rdwr-write-blocked") == 0) {
    // The first write's capture fails and the policy blocks it: ENOSPC,
    // nothing written; the second try is blocked again.
    int fd = open(a, O_RDWR);
    if (fd < 0) return fail("open O_RDWR");
    for (int i = 0; i < 2; ++i) {
      errno = 0;
      if (write(fd, "XY", 2) != -1 || errno != ENOSPC) return fail("a blocked write");
    }
    if (close(fd) != 0) return fail("close");
  } else if (strcmp(what, "rdwr-nowrite") == 0) {
    int fd = open(a, O_RDWR);
    if (fd < 0) return fail("open O_RDWR");
    char c;
    if (read(fd, &c, 1) != 1 || close(fd) != 0) return fail("read");
  } else if (strcmp(what, "rename") == 0) {
    if (rename(a, b) != 0) return fail("rename");
  } else if (strcmp(what, "rename-exdev") == 0) {
    errno = 0;
    if (rename(a, b) != -1 || errno != EXDEV) return fail("rename across file systems");
  } else if (strcmp(what, "mkdir") == 0) {
    if (mkdir(a, 0755) != 0) return fail("mkdir");
  } else if (strcmp(what, "named-unlink") == 0) {
    // The process renamed (prctl from its main thread), then b unlinked.
    if (prctl(PR_SET_NAME, a) != 0) return fail("prctl");
    if (unlink(b) != 0) return fail("unlink");
  } else if (strcmp(what, "thread-named-unlink") == 0) {
    // A thread renames itself (a) and unlinks b; the main thread then
    // unlinks argv[4] under the process's own name.
    struct named_unlink u = {a, b, -1};
    pthread_t t;
    if (argc < 5 || pthread_create(&t, NULL, rename_self_and_unlink, &u) != 0) return fail("pthread_create");
    if (pthread_join(t, NULL) != 0 || u.rc != 0) return fail("the thread's unlink");
    if (unlink(argv[4]) != 0) return fail("unlink");
  } else if (strcmp(what, "mkdir-symlink-chmod") == 0) {
    // a: a new directory, b: a new symlink (to "target"), then chmod of a.
    if (mkdir(a, 0750) != 0) return fail("mkdir");
    if (symlink("target", b) != 0) return fail("symlink");
    if (chmod(a, 0700) != 0) return fail("chmod");
  } else if (strcmp(what, "fork-unlink") == 0) {
    pid_t pid = fork();
    if (pid < 0) return fail("fork");
    if (pid == 0) _exit(unlink(b) == 0 ? 0 : 3);
    if (unlink(a) != 0) return fail("parent's unlink");
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return fail("child's unlink");
    }
  } else if (strcmp(what, "vfork-unlink") == 0) {
    pid_t pid = vfork();
    if (pid < 0) return fail("vfork");
    if (pid == 0) {
      if (unlink(a) != 0) _exit(3);
      char* args[] = {"true", NULL};
      execv("/bin/true", args);
      _exit(4);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return fail("vfork child");
    }
    if (access(a, F_OK) == 0) return fail("still there");
  } else if (strcmp(what, "fopen") == 0) {
    // fopen(a, mode b), then "new\n" written through the stream.
    FILE* f = fopen(a, b);
    if (f == NULL) return fail("fopen");
    if (fputs("new\n", f) < 0 || fclose(f) != 0) return fail("fputs");
  } else if (strcmp(what, "fopen-append-ftell") == 0) {
    // "a" as glibc leaves it: the offset at the end, the writes appended.
    FILE* f = fopen(a, "a");
    if (f == NULL) return fail("fopen a");
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || ftell(f) != st.st_size) return fail("ftell after fopen a");
    if (fputs("more\n", f) < 0 || fclose(f) != 0) return fail("fputs");
  } else if (strcmp(what, "fopen-excl-existing") == 0) {
    errno = 0;
    if (fopen(a, "wx") != NULL || errno != EEXIST) return fail("fopen wx of an existing file");
  } else if (strcmp(what, "fopen-read") == 0) {
    FILE* f = fopen(a, "r");
    char line[64];
    if (f == NULL || fgets(line, sizeof line, f) == NULL || fclose(f) != 0) return fail("fopen r");
  } else if (strcmp(what, "freopen") == 0) {
    // A stream on a (read), reopened on b with mode argv[4]: the same FILE*
    // and fd number, then "new\n" written.
    if (argc < 5) return 2;
    FILE* f = fopen(a, "r");
    if (f == NULL) return fail("fopen r");
    int fd = fileno(f);
    FILE* g = freopen(b, argv[4], f);
    if (g != f || fileno(g) != fd) return fail("freopen kept the stream");
    if (fputs("new\n", g) < 0 || fclose(g) != 0) return fail("fputs");
  } else if (strcmp(what, "freopen-stdout") == 0) {
    // The idiom that frees the stream's number first: close(1), then
    // freopen of stdout, whose fd must be 1 again.
    fflush(stdout);
    close(1);
    if (freopen(a, "w", stdout) != stdout || fileno(stdout) != 1) return fail("freopen of stdout");
    if (printf("new\n") != 4 || fflush(stdout) != 0) return fail("printf");
  } else if (strcmp(what, "fdopen-write") == 0) {
    // An fd opened for writing (its capture waits for its first write),
    // then written through a stream, whose writes are glibc's own.
    int fd = open(a, O_RDWR);
    if (fd < 0) return fail("open O_RDWR");
    FILE* f = fdopen(fd, "r+");
    if (f == NULL) return fail("fdopen");
    if (fputs("XY", f) < 0 || fclose(f) != 0) return fail("fputs");
  } else if (strcmp(what, "dprintf-write") == 0) {
    int fd = open(a, O_WRONLY | O_APPEND);
    if (fd < 0) return fail("open O_APPEND");
    if (dprintf(fd, "%s\n", "more") != 5 || close(fd) != 0) return fail("dprintf");
  } else if (strcmp(what, "mkstemp-all") == 0) {
    // Each of the family once, in directory a: names made, files new, 0600.
    char t[8][64];
    for (int i = 0; i < 8; ++i) snprintf(t[i], sizeof t[i], "%s/tmp%dXXXXXX%s", a, i, i >= 4 ? ".c" : "");
    int fds[8] = {mkstemp(t[0]), mkstemp64(t[1]), mkostemp(t[2], O_CLOEXEC), mkostemp64(t[3], O_APPEND),
                  mkstemps(t[4], 2), mkstemps64(t[5], 2), mkostemps(t[6], 2, 0), mkostemps64(t[7], 2, O_CLOEXEC)};
    for (int i = 0; i < 8; ++i) {
      struct stat st;
      if (fds[i] < 0) return fail("mkstemp family");
      if (strstr(t[i], "XXXXXX") != NULL) return fail("name not made");
      if (stat(t[i], &st) != 0 || (st.st_mode & 07777) != 0600 || st.st_size != 0) return fail("the new file");
      if (write_all(fds[i], "t\n") != 0 || close(fds[i]) != 0) return fail("write");
    }
  } else if (strcmp(what, "mkdtemp") == 0) {
    char t[64];
    snprintf(t, sizeof t, "%s/dirXXXXXX", a);
    struct stat st;
    if (mkdtemp(t) != t || strstr(t, "XXXXXX") != NULL) return fail("mkdtemp");
    if (stat(t, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0700) return fail("the new directory");
  } else if (strcmp(what, "mkstemp-bad") == 0) {
    // Templates glibc refuses: EINVAL, the template as it was.
    char five[] = "tmpXXXXX";
    char suffix[] = "tmpXXXXXX.c";
    errno = 0;
    if (mkstemp(five) != -1 || errno != EINVAL || strcmp(five, "tmpXXXXX") != 0) return fail("five X's");
    errno = 0;
    if (mkstemps(suffix, 3) != -1 || errno != EINVAL || strcmp(suffix, "tmpXXXXXX.c") != 0) {
      return fail("a suffix over the X's");
    }
    errno = 0;
    if (mkstemps(suffix, -1) != -1 || errno != EINVAL) return fail("a negative suffix");
  } else {
    return 2;
  }
  return 0;
}
