/* open_fds [N...]: prints the numbers of this process's open file
 * descriptors on one line ("open: 0 1 2"), leaving out the one it lists
 * /proc/self/fd through, then tries to write a line to each fd N given and
 * prints "write N: ok" or "write N: <errno name>". The fd tests run it under
 * guard to see exactly which fds the command inherits. The one guard gives
 * the command on purpose under --mode auto, its inbox (GUARD_SHIM_INBOX_FD,
 * docs/shim.md "The inbox by fd"), is left out of the list when it is what
 * it must be, an O_PATH directory (nothing can be written through it), and
 * said on a line of its own ("inbox fd: N, O_PATH directory"); anything
 * else at that number is listed as any other fd. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  DIR* d = opendir("/proc/self/fd");
  if (d == NULL) {
    fprintf(stderr, "open_fds: /proc/self/fd: %s\n", strerror(errno));
    return 1;
  }
  int listing = dirfd(d);
  const char* inbox_text = getenv("GUARD_SHIM_INBOX_FD");
  int inbox = inbox_text != NULL ? atoi(inbox_text) : -1;
  struct stat st;
  int flags = inbox >= 0 ? fcntl(inbox, F_GETFL) : -1;
  int inbox_ok = flags >= 0 && (flags & O_PATH) != 0 && fstat(inbox, &st) == 0 && S_ISDIR(st.st_mode);
  /* Read them all before printing: stdout's buffer opens no fd, but keep
   * the listing free of anything but what was inherited. */
  int fds[1024];
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL && n < 1024) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd != listing && !(inbox_ok && fd == inbox)) fds[n++] = fd;
  }
  closedir(d);
  /* readdir of /proc/self/fd gives them in ascending order. */
  printf("open:");
  for (int i = 0; i < n; ++i) printf(" %d", fds[i]);
  printf("\n");
  if (inbox_ok) printf("inbox fd: %d, O_PATH directory\n", inbox);
  for (int i = 1; i < argc; ++i) {
    int fd = atoi(argv[i]);
    static const char kLine[] = "written by the command\n";
    if (write(fd, kLine, sizeof kLine - 1) == (ssize_t)(sizeof kLine - 1)) {
      printf("write %d: ok\n", fd);
    } else {
      printf("write %d: %s\n", fd, errno == EBADF ? "EBADF" : strerror(errno));
    }
  }
  return 0;
}
