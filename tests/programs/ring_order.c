/* ring_order: a traced call must not be journaled ahead of its own thread's
 * earlier shim calls (--mode auto). Another process's ring record that is
 * claimed and not yet published holds back the records behind it; a call
 * the tracer stops meanwhile was recorded at once, before them (session
 * 19's F2).
 *
 *   ring_order A B C   in the current directory, files A and B and C exist:
 *     1. a child execs this program as "stall C" with
 *        GUARD_SHIM_TEST_SLOW_PUT=400: its open of C for truncation claims
 *        a ring record and sleeps 400 ms before publishing it;
 *     2. 100 ms later (the child has claimed by then; nothing depends on
 *        it being exactly so) this process renames A over B through libc
 *        (the shim: its record lands behind the child's) and then unlinks
 *        B by a raw syscall instruction (the tracer: no shim sees it);
 *     3. waits for the child.
 *   Undo must give A and B back: the unlink's pre-image is what the rename
 *   put at B, and the rename's is B's own content, only in that order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"
#include "common/shim_interface.h"

extern char** environ;

static long raw_unlinkat(int dirfd, const char* path, int flags) {
  return raw_syscall4(SYS_unlinkat, dirfd, (long)path, flags, 0);
}

static int stall(const char* file) {
  int fd = open(file, O_WRONLY | O_TRUNC);
  if (fd < 0) {
    perror(file);
    return 1;
  }
  if (write(fd, "stalled\n", 8) != 8) return 1;
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "stall") == 0) return stall(argv[2]);
  if (argc != 4) {
    fprintf(stderr, "usage: ring_order A B C\n");
    return 2;
  }
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    size_t n = 0;
    while (environ[n] != NULL) ++n;
    char** env = calloc(n + 2, sizeof *env);
    if (env == NULL) _exit(1);
    memcpy(env, environ, n * sizeof *env);
    env[n] = GUARD_ENV_SHIM_TEST_SLOW_PUT "=400";
    char* args[] = {argv[0], "stall", argv[3], NULL};
    execve("/proc/self/exe", args, env);
    _exit(127);
  }
  struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  if (rename(argv[1], argv[2]) != 0) {
    perror("rename");
    return 1;
  }
  long r = raw_unlinkat(AT_FDCWD, argv[2], 0);
  if (r != 0) {
    fprintf(stderr, "unlinkat: %s\n", strerror((int)-r));
    return 1;
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  return 0;
}
