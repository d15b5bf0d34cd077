/* capture_races MODE FILE: threads and processes meeting the shim's capture
 * half-way (found by session 19's adversarial pass). Exits 0 when every
 * call it checks succeeded, else says which failed and exits 1.
 *
 *   fork-mid-capture  FILE (large) opened O_RDWR; a second thread makes the
 *                     first write into it (the shim copies FILE first) while
 *                     the main thread forks; the child writes through the
 *                     same fd, then execs /bin/true. A child that inherited
 *                     the mark of a capture no thread of its own was making
 *                     waited for it forever.
 *   lease-break       one thread recreates FILE (O_CREAT|O_TRUNC) and
 *                     unlinks it, 300 times; another opens it O_APPEND and
 *                     writes, meanwhile. Each unlink's capture takes a read
 *                     lease on FILE in this process, and an open for writing
 *                     breaks it: the kernel's signal for that (SIGIO by
 *                     default) killed the program.
 *   first-writers     DIR holds files 0..FILES-1; 8 children open every one
 *                     for writing without O_TRUNC (the shim captures each
 *                     at its first write), wait for one another, then each
 *                     writes its number over the start of every file. The
 *                     shim read a small file's pre-image into its record
 *                     after claiming the record's place, so another child's
 *                     capture and write could come in between: the kept
 *                     pre-image (the first claimed) held that child's bytes
 *                     (session 19's second adversarial pass).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fail(const char* what) {
  perror(what);
  return 1;
}

static void* first_write(void* arg) {
  int fd = *(int*)arg;
  if (pwrite(fd, "T", 1, 0) != 1) perror("pwrite in the thread");
  return NULL;
}

static int fork_mid_capture(const char* file) {
  int fd = open(file, O_RDWR);
  if (fd < 0) return fail(file);
  pthread_t t;
  if (pthread_create(&t, NULL, first_write, &fd) != 0) return fail("pthread_create");
  struct timespec pause = {0, 2000000};  // 2 ms: inside the copy of a large file
  nanosleep(&pause, NULL);
  pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    if (pwrite(fd, "C", 1, 1) != 1) _exit(fail("pwrite in the child"));
    execl("/bin/true", "true", (char*)NULL);
    _exit(127);
  }
  pthread_join(t, NULL);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return fail("waitpid");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static volatile int stop;
static const char* lease_file;

/* At most 3,000 opens: each is a new capture of the file, so a thread
 * free-running against a slower unlinker would make the run as long as it
 * has opens. */
static void* appender(void* arg) {
  (void)arg;
  for (int n = 0; n < 3000 && !stop; ++n) {
    int fd = open(lease_file, O_WRONLY | O_APPEND);
    if (fd >= 0) {
      (void)write(fd, "w", 1);
      close(fd);
    }
  }
  return NULL;
}

static int lease_break(const char* file) {
  lease_file = file;
  pthread_t t;
  if (pthread_create(&t, NULL, appender, NULL) != 0) return fail("pthread_create");
  for (int i = 0; i < 300; ++i) {
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
    unlink(file);
  }
  stop = 1;
  pthread_join(t, NULL);
  return 0;
}

enum { kWriters = 8, kFiles = 150 };

static int first_writers(const char* dir) {
  int go[2];
  if (pipe(go) != 0) return fail("pipe");
  pid_t kids[kWriters];
  for (int k = 0; k < kWriters; ++k) {
    kids[k] = fork();
    if (kids[k] < 0) return fail("fork");
    if (kids[k] != 0) continue;
    close(go[1]);
    int fds[kFiles];
    for (int i = 0; i < kFiles; ++i) {
      char name[PATH_MAX];
      snprintf(name, sizeof name, "%s/%d", dir, i);
      fds[i] = open(name, O_WRONLY);
      if (fds[i] < 0) _exit(fail(name));
    }
    char c;
    if (read(go[0], &c, 1) != 0) _exit(fail("read of the start"));  /* EOF: everyone may go */
    char text[32];
    int n = snprintf(text, sizeof text, "writer %d was here\n", k);
    for (int i = 0; i < kFiles; ++i) {
      if (pwrite(fds[i], text, (size_t)n, 0) != n) _exit(fail("pwrite"));
    }
    _exit(0);
  }
  close(go[0]);
  struct timespec pause = {0, 20000000};  /* 20 ms: the children have their fds open (no need to be exact) */
  nanosleep(&pause, NULL);
  close(go[1]);
  int failed = 0;
  for (int k = 0; k < kWriters; ++k) {
    int status = 0;
    if (waitpid(kids[k], &status, 0) != kids[k] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODE FILE\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "fork-mid-capture") == 0) return fork_mid_capture(argv[2]);
  if (strcmp(argv[1], "lease-break") == 0) return lease_break(argv[2]);
  if (strcmp(argv[1], "first-writers") == 0) return first_writers(argv[2]);
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
