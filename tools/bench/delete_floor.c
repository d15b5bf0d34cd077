/* What a delete costs with each of the system calls the preload shim adds
 * to capture it (docs/shim.md, "Costs": unlinkat(dirfd, name) of a file),
 * made by hand in one process without the shim: the floor under `rm -rf`
 * that in-process capture cannot go below, step by step.
 *
 *   delete_floor DIR STEP [FILES]
 *
 * Makes FILES (10,000) small files in DIR/src, syncs, then times removing
 * them with unlinkat(dirfd, name) after the calls of STEPs 1..STEP:
 *   0  the unlink alone (bare)
 *   1  + readlink of /proc/self/fd/<dirfd> (the parent's name)
 *   2  + fstatat(AT_SYMLINK_NOFOLLOW) of the victim
 *   3  + statx(dirfd, STATX_MNT_ID) (the place test)
 *   4  + openat, fcntl(F_SETLEASE, F_RDLCK), close (nobody writes it)
 *   5  + getpid, gettid (the pending name, the records)
 *   6  + linkat into DIR/inbox (the pre-image)
 *   7  rename into DIR/inbox in place of link + unlink
 *   8  steps 1-3 and 5, then the content read (openat, pread, close) in
 *      place of the lease check and the link: an inline pre-image
 *   9  the linkat into DIR/inbox alone, then the unlink: what any capture
 *      by link costs at least, with no name, no state and no lease check
 *  10  step 9 with the fstatat of step 2 (the state a record needs)
 * Prints "step N: T us per file". The ring's puts cost no system call and
 * are left out (tools/bench/ring_bench.sh measures them). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "floor_clock.h"


int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DIR STEP [FILES]\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  int step = atoi(argv[2]);
  int n = argc > 3 ? atoi(argv[3]) : 10000;
  char path[4096], name[64], pend[64], buf[4096], link_name[64];
  snprintf(path, sizeof path, "%s/src", dir);
  if (mkdir(path, 0755) != 0) return perror(path), 1;
  snprintf(path, sizeof path, "%s/inbox", dir);
  if (mkdir(path, 0700) != 0) return perror(path), 1;
  snprintf(path, sizeof path, "%s/src", dir);
  int src = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  snprintf(path, sizeof path, "%s/inbox", dir);
  int inbox = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0 || inbox < 0) return perror(dir), 1;
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "f%d", i);
    int fd = openat(src, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "hello\n", 6) != 6) return perror(name), 1;
    close(fd);
  }
  sync();
  snprintf(link_name, sizeof link_name, "/proc/self/fd/%d", src);
  double t0 = floor_now();
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "f%d", i);
    snprintf(pend, sizeof pend, "p%d", i);
    struct stat st;
    struct statx stx;
    if (step >= 9) {
      if (step == 10) (void)fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW);
      if (linkat(src, name, inbox, pend, 0) != 0) return perror("linkat"), 1;
      if (unlinkat(src, name, 0) != 0) return perror("unlinkat"), 1;
      continue;
    }
    if (step >= 1) (void)readlink(link_name, buf, sizeof buf);
    if (step >= 2) (void)fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW);
    if (step >= 3) (void)statx(src, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx);
    if (step == 8) {
      int fd = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        (void)pread(fd, buf, sizeof buf, 0);
        close(fd);
      }
      (void)getpid();
      (void)syscall(SYS_gettid);
      if (unlinkat(src, name, 0) != 0) return perror("unlinkat"), 1;
      continue;
    }
    if (step >= 4) {
      int fd = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        (void)fcntl(fd, F_SETLEASE, F_RDLCK);
        close(fd);
      }
    }
    if (step >= 5) {
      (void)getpid();
      (void)syscall(SYS_gettid);
    }
    if (step == 7) {
      if (renameat(src, name, inbox, pend) != 0) return perror("renameat"), 1;
      continue;
    }
    if (step >= 6 && linkat(src, name, inbox, pend, 0) != 0) return perror("linkat"), 1;
    if (unlinkat(src, name, 0) != 0) return perror("unlinkat"), 1;
  }
  double t1 = floor_now();
  printf("step %d: %.1f us per file\n", step, (t1 - t0) / n * 1e6);
  for (int i = 0; i < n; ++i) {
    snprintf(pend, sizeof pend, "p%d", i);
    (void)unlinkat(inbox, pend, 0);
  }
  snprintf(path, sizeof path, "%s/src", dir);
  rmdir(path);
  snprintf(path, sizeof path, "%s/inbox", dir);
  rmdir(path);
  return 0;
}
