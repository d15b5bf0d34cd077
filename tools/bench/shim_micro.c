/* shim_micro: the cost the preload shim adds to calls it does not capture
 * (issue 13: under 100 ns), and to one it does, measured inside one
 * process. Run bare and under the shim by tools/bench/shim_micro.sh.
 *
 *   shim_micro DIR N
 *
 * DIR holds a file "r" (opened read-only) and is outside the shim's root.
 * Prints one line per kind: "kind ns_per_call". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: shim_micro DIR N\n");
    return 2;
  }
  const char* dir = argv[1];
  long n = atol(argv[2]);
  char r[4096], w[4096];
  snprintf(r, sizeof r, "%s/r", dir);
  snprintf(w, sizeof w, "%s/w", dir);
  int fd = open(w, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return perror(w), 1;
  close(fd);

  /* A read-only open and its close: classified "nothing", no capture. */
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    fd = open(r, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return perror(r), 1;
    close(fd);
  }
  double t1 = now_ns();
  printf("open_rdonly_close %.1f\n", (t1 - t0) / (double)n);

  /* A write through an fd the shim has nothing pending on. */
  fd = open(w, O_WRONLY | O_APPEND);
  char byte = 'x';
  t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    if (write(fd, &byte, 1) != 1) return perror("write"), 1;
  }
  t1 = now_ns();
  close(fd);
  printf("write_1_byte %.1f\n", (t1 - t0) / (double)n);

  /* An open for writing outside the root: resolved, recorded by name. */
  long m = n / 100 > 0 ? n / 100 : 1; /* the ring has no consumer here: keep its records few */
  t0 = now_ns();
  for (long i = 0; i < m; ++i) {
    fd = open(w, O_WRONLY | O_APPEND);
    if (fd < 0) return perror(w), 1;
    close(fd);
  }
  t1 = now_ns();
  printf("open_wronly_outside_close %.1f\n", (t1 - t0) / (double)m);
  return 0;
}
