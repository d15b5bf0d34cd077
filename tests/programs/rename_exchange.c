/* rename_exchange A B: swaps A and B atomically with renameat2(RENAME_EXCHANGE),
 * which coreutils 9.1 (Debian 12) cannot do. Used by the random workloads of
 * the restore property tests: undo must swap them back, directories included. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: rename_exchange A B\n");
    return 2;
  }
  /* The raw syscall: glibc's renameat2 wrapper is recent enough, but a raw
   * call is what a static agent binary would make. */
  if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) {
    fprintf(stderr, "rename_exchange %s %s: %s\n", argv[1], argv[2], strerror(errno));
    return 1;
  }
  return 0;
}
