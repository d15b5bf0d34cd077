/* What a file's creation costs with each of the system calls the preload
 * shim adds to capture it, made by hand in one process without the shim:
 * the floor under `tar -x` that in-process capture cannot go below, step by
 * step (docs/shim.md, "Costs"; the calls are those strace shows the shim
 * make for tar's openat(AT_FDCWD, "d/f", O_WRONLY|O_CREAT|O_EXCL), fchown
 * and fchmod of each file).
 *
 *   create_floor DIR STEP [FILES] [BYTES]
 *
 * Times making FILES (10,000) files of BYTES (4,096) in DIR/d as tar does
 * (open O_CREAT|O_EXCL by a relative name, write, fchown, fchmod, close)
 * after the calls of STEPs 1..STEP:
 *   0  the creation alone (bare)
 *   1  + getcwd, openat2 of the parent (O_PATH, RESOLVE_NO_SYMLINKS) and
 *        its close (the parent's name)
 *   2  + fstatat(AT_SYMLINK_NOFOLLOW) of the new name in the parent (the
 *        state before: absent)
 *   3  + statx(parent, STATX_MNT_ID) (the place test)
 *   4  + getpid (the record's process)
 *   5  + fstat of the new fd (the fd's mark, for the calls on it)
 *   6  + fstat of the fd before fchown and before fchmod (the shim today)
 *   9  the fstatat of step 2 alone: no name, no mark; what any record of
 *      the state before costs at least
 * Prints "step N: T us per file". The ring's puts cost no system call and
 * are left out (tools/bench/ring_bench.sh measures them). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "floor_clock.h"


int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DIR STEP [FILES] [BYTES]\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  int step = atoi(argv[2]);
  int n = argc > 3 ? atoi(argv[3]) : 10000;
  size_t bytes = argc > 4 ? (size_t)atol(argv[4]) : 4096;
  char* data = malloc(bytes ? bytes : 1);
  if (data == NULL) return perror("malloc"), 1;
  memset(data, 'x', bytes);
  if (chdir(dir) != 0) return perror(dir), 1;
  if (mkdir("d", 0755) != 0) return perror("d"), 1;
  sync();
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  char name[64], cwd[4096];
  struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
  double t0 = floor_now();
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "d/f%d", i);
    const char* leaf = name + 2;
    struct stat st;
    struct statx stx;
    int parent = -1;
    if (step >= 1 && step < 9) {
      (void)getcwd(cwd, sizeof cwd);
      parent = (int)syscall(SYS_openat2, AT_FDCWD, "d", &how, sizeof how);
    }
    if (step == 9) (void)fstatat(AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW);
    if (step >= 2 && step < 9) (void)fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW);
    if (step >= 3 && step < 9) (void)statx(parent, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx);
    if (step >= 4 && step < 9) (void)getpid();
    int fd = openat(AT_FDCWD, name, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) return perror(name), 1;
    if (step >= 5 && step < 9) (void)fstat(fd, &st);
    if (parent >= 0) close(parent);
    if (bytes > 0 && write(fd, data, bytes) != (ssize_t)bytes) return perror("write"), 1;
    if (step >= 6 && step < 9) (void)fstat(fd, &st);
    (void)fchown(fd, uid, gid);
    if (step >= 6 && step < 9) (void)fstat(fd, &st);
    (void)fchmod(fd, 0644);
    close(fd);
  }
  double t1 = floor_now();
  printf("step %d: %.1f us per file\n", step, (t1 - t0) / n * 1e6);
  for (int i = 0; i < n; ++i) {
    snprintf(name, sizeof name, "d/f%d", i);
    (void)unlink(name);
  }
  rmdir("d");
  free(data);
  return 0;
}
