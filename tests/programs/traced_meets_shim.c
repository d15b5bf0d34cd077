/* traced_meets_shim BIG SMALL: a traced call on a name a shim call of
 * another thread is still capturing (--mode auto). Thread A truncates BIG
 * through libc (the shim copies its content first: milliseconds for a large
 * file, holding BIG's name lock); thread B, 2 ms after A starts, renames
 * SMALL over BIG by a raw syscall instruction (the tracer's). Unheld, B's
 * rename ran inside A's copy and A then truncated SMALL's file, whose
 * content no record kept. Exits 0 when both calls succeeded. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"

static const char* big;
static const char* small;

static void* renamer(void* arg) {
  (void)arg;
  struct timespec pause = {0, 2 * 1000 * 1000}; /* inside A's copy; nothing depends on it being exact */
  nanosleep(&pause, NULL);
  long r = raw_syscall4(SYS_renameat, AT_FDCWD, (long)small, AT_FDCWD, (long)big);
  if (r != 0) {
    fprintf(stderr, "rename %s %s: %s\n", small, big, strerror((int)-r));
    return (void*)1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: traced_meets_shim BIG SMALL\n");
    return 2;
  }
  big = argv[1];
  small = argv[2];
  pthread_t b;
  if (pthread_create(&b, NULL, renamer, NULL) != 0) return 1;
  int fd = open(big, O_WRONLY | O_TRUNC);
  if (fd < 0) {
    perror(big);
    return 1;
  }
  if (write(fd, "A\n", 2) != 2) return 1;
  close(fd);
  void* rc = NULL;
  pthread_join(b, &rc);
  return rc == NULL ? 0 : 1;
}
