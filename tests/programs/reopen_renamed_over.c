/* reopen_renamed_over FROM VICTIM: opens VICTIM read-only, renames FROM over
 * it (the shim links the old VICTIM into the pending area after asking for a
 * read lease on it, to tell that nobody writes it), then reopens the old
 * file for writing through /proc/self/fd and writes to it. A lease the shim
 * left behind would make that open break it: SIGIO to this process (whose
 * default action ends it) and a wait for the break. Exit 0 when the write
 * went through. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: reopen_renamed_over FROM VICTIM\n");
    return 2;
  }
  int r = open(argv[2], O_RDONLY | O_CLOEXEC);
  if (r < 0) return perror("open VICTIM"), 1;
  if (rename(argv[1], argv[2]) != 0) return perror("rename"), 1;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", r);
  int w = open(link, O_WRONLY | O_CLOEXEC);
  if (w < 0) return perror("reopen for writing"), 1;
  if (write(w, "x", 1) != 1) return perror("write"), 1;
  close(w);
  close(r);
  return 0;
}
