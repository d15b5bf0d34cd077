/* path_race N: a second thread rewrites the path buffer of an open while
 * it runs. In the working directory, victim000 ... victim<N-1> exist; for
 * each, a thread flips one buffer between "/dev/null" and the victim's
 * name as fast as it can, while the main thread opens the buffer with
 * O_WRONLY|O_TRUNC until the victim has been truncated (up to 5,000 tries
 * each). A guard that looked at "/dev/null" while the kernel opened the
 * victim lost that truncation: undo would not bring the victim back.
 * Prints "truncated K of N" and exits 0. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_LEN 10 /* "/dev/null" and "victimNNN", with their NUL */

static char buf[NAME_LEN];
static char victim[NAME_LEN];
static atomic_int round_no = 0;  /* which victim; -1: stop */

static void* Flip(void* unused) {
  (void)unused;
  while (atomic_load(&round_no) >= 0) {
    /* volatile stores, byte by byte: the compiler must not fold them */
    for (int i = 0; i < NAME_LEN; ++i) ((volatile char*)buf)[i] = "/dev/null"[i];
    for (int i = 0; i < NAME_LEN; ++i) ((volatile char*)buf)[i] = ((volatile char*)victim)[i];
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: path_race N\n");
    return 2;
  }
  int n = atoi(argv[1]);
  snprintf(victim, sizeof victim, "victim%03d", 0);
  memcpy(buf, "/dev/null", NAME_LEN);
  pthread_t flipper;
  if (pthread_create(&flipper, NULL, Flip, NULL) != 0) return 1;
  int truncated = 0;
  long opens = 0;
  for (int i = 0; i < n; ++i) {
    char name[NAME_LEN];
    snprintf(name, sizeof name, "victim%03d", i);
    memcpy(victim, name, NAME_LEN);
    atomic_store(&round_no, i);
    for (int t = 0; t < 5000; ++t) {
      int fd = open(buf, O_WRONLY | O_TRUNC);
      ++opens;
      if (fd >= 0) close(fd);
      struct stat st;
      if (stat(name, &st) == 0 && st.st_size == 0) {
        ++truncated;
        break;
      }
    }
  }
  atomic_store(&round_no, -1);
  pthread_join(flipper, NULL);
  printf("truncated %d of %d (%ld opens)\n", truncated, n, opens);
  return 0;
}
