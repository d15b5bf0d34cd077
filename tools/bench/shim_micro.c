/* shim_micro: the cost the preload shim adds to calls it does not capture
 * (issue 13: under 100 ns), and to one it does, measured inside one
 * process. Run bare and under the shim by tools/bench/shim_micro.sh.
 *
 *   shim_micro DIR N
 *
 * DIR holds a file "r" (opened read-only) and is outside the shim's root.
 * Prints one line per measurement: "name ns_per_call".
 *
 * Two kinds of lines:
 *  - "kind" lines time N calls as the program makes them (through the shim
 *    when it is preloaded), to be compared with the same line of a bare run;
 *  - "paired_kind" lines time, inside this one process, the same call made
 *    through the symbol the program binds to (the shim's, when preloaded)
 *    and through libc's own function (dlsym of libc.so.6, which the shim
 *    never sees), in alternating rounds of 1,000 calls. They print the
 *    median over the rounds of (bound - libc) per call: what the shim adds,
 *    with the machine's drift between the two halves of a round cancelled.
 *    A bare run prints the method's own floor (both sides are libc's). */
#define _GNU_SOURCE
#include <dlfcn.h>
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

typedef int (*open_fn)(const char*, int, ...);
typedef int (*close_fn)(int);
typedef ssize_t (*write_fn)(int, const void*, size_t);

enum { kRound = 1000 };

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One round of kRound open+close of `path` through `o` and `c`, in ns per
 * pair; -1 on a failed open. */
static double open_close_round(open_fn o, close_fn c, const char* path) {
  double t0 = now_ns();
  for (int i = 0; i < kRound; ++i) {
    int fd = o(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    c(fd);
  }
  return (now_ns() - t0) / kRound;
}

static double write_round(write_fn w, int fd) {
  char byte = 'x';
  double t0 = now_ns();
  for (int i = 0; i < kRound; ++i) {
    if (w(fd, &byte, 1) != 1) return -1;
  }
  return (now_ns() - t0) / kRound;
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

  /* The same two calls paired with libc's own functions (see the top). */
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  open_fn libc_open = libc ? (open_fn)dlsym(libc, "open") : NULL;
  close_fn libc_close = libc ? (close_fn)dlsym(libc, "close") : NULL;
  write_fn libc_write = libc ? (write_fn)dlsym(libc, "write") : NULL;
  if (!libc_open || !libc_close || !libc_write) return fprintf(stderr, "shim_micro: libc's functions: %s\n", dlerror()), 1;
  long rounds = n / kRound > 0 ? n / kRound : 1;
  double* diff = malloc(sizeof(double) * (size_t)rounds);
  if (diff == NULL) return perror("malloc"), 1;
  for (long i = 0; i < rounds; ++i) {
    /* The order alternates, so that neither side always runs first. */
    double a, b;
    if (i % 2) {
      a = open_close_round(open, close, r);
      b = open_close_round(libc_open, libc_close, r);
    } else {
      b = open_close_round(libc_open, libc_close, r);
      a = open_close_round(open, close, r);
    }
    if (a < 0 || b < 0) return perror(r), 1;
    diff[i] = a - b;
  }
  printf("paired_open_rdonly_close %.1f\n", median(diff, rounds));
  fd = open(w, O_WRONLY | O_APPEND);
  if (fd < 0) return perror(w), 1;
  for (long i = 0; i < rounds; ++i) {
    double a, b;
    if (i % 2) {
      a = write_round(write, fd);
      b = write_round(libc_write, fd);
    } else {
      b = write_round(libc_write, fd);
      a = write_round(write, fd);
    }
    if (a < 0 || b < 0) return perror("write"), 1;
    diff[i] = a - b;
  }
  close(fd);
  printf("paired_write_1_byte %.1f\n", median(diff, rounds));
  free(diff);

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
