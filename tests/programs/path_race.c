/* path_race N: a second thread rewrites the path buffer of an open while
 * it runs. In the working directory, "junk" and v000 ... v<N-1> exist;
 * for each victim, a thread flips one buffer between "junk" and the
 * victim's name (one 8-byte store: never a torn name), holding each for a
 * varying while, as the main thread opens the buffer with O_WRONLY|O_TRUNC
 * until the victim has been truncated (up to 20,000 tries each). A guard
 * that looked at "junk" while the kernel opened the victim saved junk's
 * content, not the victim's: undo would leave the victim empty.
 * Prints "truncated K of N" and exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The path, as one word: the string's bytes and its NUL. */
static _Atomic uint64_t buf;
static _Atomic uint64_t victim;
static atomic_int stop;

static uint64_t Word(const char* name) {
  uint64_t w = 0;
  memcpy(&w, name, strlen(name) + 1);
  return w;
}

static void Spin(unsigned n) {
  for (volatile unsigned i = 0; i < n; ++i) {
  }
}

static void* Flip(void* unused) {
  (void)unused;
  const uint64_t junk = Word("junk");
  unsigned hold = 1;
  while (!atomic_load(&stop)) {
    atomic_store_explicit(&buf, junk, memory_order_relaxed);
    Spin(hold);
    atomic_store_explicit(&buf, atomic_load_explicit(&victim, memory_order_relaxed), memory_order_relaxed);
    Spin(hold);
    hold = hold * 3 % 4093; /* from a few cycles to some microseconds */
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: path_race N\n");
    return 2;
  }
  int n = atoi(argv[1]);
  if (n < 1 || n > 999) return 2;
  atomic_store(&victim, Word("v000"));
  atomic_store(&buf, Word("junk"));
  pthread_t flipper;
  if (pthread_create(&flipper, NULL, Flip, NULL) != 0) return 1;
  int truncated = 0;
  long opens = 0;
  for (int i = 0; i < n; ++i) {
    char name[16];
    snprintf(name, sizeof name, "v%03d", i);
    atomic_store(&victim, Word(name));
    for (int t = 0; t < 20000; ++t) {
      int fd = open((const char*)&buf, O_WRONLY | O_TRUNC);
      ++opens;
      if (fd >= 0) close(fd);
      /* On a busy machine both threads may share one CPU: the flipper
       * must get it now and then, or the buffer holds one name for a
       * whole time slice. */
      if (t % 16 == 15) sched_yield();
      struct stat st;
      if (stat(name, &st) == 0 && st.st_size == 0) {
        ++truncated;
        break;
      }
    }
  }
  atomic_store(&stop, 1);
  pthread_join(flipper, NULL);
  printf("truncated %d of %d (%ld opens)\n", truncated, n, opens);
  return 0;
}
