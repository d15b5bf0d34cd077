/* traced_meets_shim BIG SMALL [shim-second]: a traced call and a shim call
 * of two threads on one name (--mode auto), the first of them still being
 * captured when the second comes. Thread A truncates BIG (its content is
 * copied first: milliseconds for a large file, while A's call holds BIG's
 * name lock); thread B, 2 ms after A starts, renames SMALL over BIG.
 *   default: A through libc (the shim), B by a raw syscall instruction (the
 *     tracer). Unheld, B's rename ran inside A's copy and A then truncated
 *     SMALL's file, whose content no record kept.
 *   shim-second: A by a raw syscall instruction (the tracer copies BIG at
 *     its stop), B through libc (the shim). Unheld, the shim's rename ran
 *     inside the tracer's copy, the same way round.
 * Exits 0 when both calls succeeded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"

static const char* big;
static const char* small;
static int shim_second;
static _Atomic long opener_tid;

/* Whether thread `tid` of this process is stopped by its tracer ('t' in
 * /proc/self/task/TID/stat): at its open's stop, where the tracer copies
 * BIG. */
static int traced_stop(long tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* close_paren = strrchr(buf, ')');
  return close_paren != NULL && close_paren[1] == ' ' && close_paren[2] == 't';
}

static void* renamer(void* arg) {
  (void)arg;
  struct timespec pause = {0, 2 * 1000 * 1000}; /* inside A's copy; nothing depends on it being exact */
  nanosleep(&pause, NULL);
  if (shim_second) {
    /* A at its stop, the tracer copying BIG (a slow machine may take longer
     * than 2 ms to get there); at most 5 s, then on regardless. */
    struct timespec poll = {0, 100 * 1000};
    for (int i = 0; i < 50000; ++i) {
      long tid = atomic_load(&opener_tid);
      if (tid != 0 && traced_stop(tid)) break;
      nanosleep(&poll, NULL);
    }
  }
  long r = shim_second ? (rename(small, big) == 0 ? 0 : -errno)
                       : raw_syscall4(SYS_renameat, AT_FDCWD, (long)small, AT_FDCWD, (long)big);
  if (r != 0) {
    fprintf(stderr, "rename %s %s: %s\n", small, big, strerror((int)-r));
    return (void*)1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "shim-second") != 0)) {
    fprintf(stderr, "usage: traced_meets_shim BIG SMALL [shim-second]\n");
    return 2;
  }
  big = argv[1];
  small = argv[2];
  shim_second = argc == 4;
  pthread_t b;
  if (pthread_create(&b, NULL, renamer, NULL) != 0) return 1;
  atomic_store(&opener_tid, (long)gettid());
  long opened = shim_second ? raw_syscall4(SYS_openat, AT_FDCWD, (long)big, O_WRONLY | O_TRUNC, 0)
                            : open(big, O_WRONLY | O_TRUNC);
  if (opened < 0 && shim_second) errno = (int)-opened;
  int fd = opened < 0 ? -1 : (int)opened;
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
