/* What a rewrite in place costs with each way the preload shim has kept
 * the old content (docs/shim.md, "Costs"): open(O_WRONLY|O_TRUNC), write,
 * close of a file, made by hand in one process without the shim.
 *
 *   rewrite_floor DIR WAY [FILES] [SIZE]
 *
 * Makes FILES (3,000) files of SIZE (8,192) bytes in DIR/src, syncs, then
 * times rewriting each (SIZE + 1 bytes) after the old content was kept by
 * WAY:
 *   0  nothing (bare)
 *   1  a copy into a new file of DIR/inbox: openat of the file, openat
 *      O_CREAT|O_EXCL in the inbox, copy_file_range to the end, two
 *      closes (the shim before session 11, and above 256 KiB since)
 *   2  the content read into memory: openat, pread, close (an inline
 *      pre-image: the shim reads it into its ring record)
 * Prints "way N: T us per file". The ring's put costs no system call and
 * is left out (tools/bench/ring_bench.sh measures it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "floor_clock.h"


static char buf[1 << 20];

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DIR WAY [FILES] [SIZE]\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  int way = atoi(argv[2]);
  int n = argc > 3 ? atoi(argv[3]) : 3000;
  int size = argc > 4 ? atoi(argv[4]) : 8192;
  if (size < 0 || size + 1 > (int)sizeof buf) return fprintf(stderr, "size out of range\n"), 2;
  char path[4096], name[64], pend[64];
  snprintf(path, sizeof path, "%s/src", dir);
  if (mkdir(path, 0755) != 0) return perror(path), 1;
  snprintf(path, sizeof path, "%s/inbox", dir);
  if (mkdir(path, 0700) != 0) return perror(path), 1;
  snprintf(path, sizeof path, "%s/src", dir);
  int src = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  snprintf(path, sizeof path, "%s/inbox", dir);
  int inbox = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0 || inbox < 0) return perror(dir), 1;
  memset(buf, 'x', (size_t)size + 1);
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "f%d", i);
    int fd = openat(src, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, buf, (size_t)size) != size) return perror(name), 1;
    close(fd);
  }
  sync();
  double t0 = floor_now();
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "f%d", i);
    if (way == 1 || way == 2) {
      int v = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (v < 0) return perror(name), 1;
      if (way == 1) {
        snprintf(pend, sizeof pend, "p%d", i);
        int p = openat(inbox, pend, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (p < 0) return perror(pend), 1;
        loff_t in = 0, out = 0;
        while (copy_file_range(v, &in, p, &out, 1 << 30, 0) > 0) {
        }
        close(p);
      } else {
        (void)pread(v, buf, (size_t)size + 1, 0);
      }
      close(v);
    }
    int fd = openat(src, name, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0 || write(fd, buf, (size_t)size + 1) != size + 1) return perror(name), 1;
    close(fd);
  }
  double t1 = floor_now();
  printf("way %d: %.1f us per file\n", way, (t1 - t0) / n * 1e6);
  return 0;
}
