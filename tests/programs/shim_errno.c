// errno across interposed calls, as without the shim: a call that succeeds
// leaves the caller's errno as it was (the shim's own work must not touch
// it), one that fails sets its own error. Exits 1 at the first mismatch.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const int kSentinel = 9999;  // no call sets it

static void Expect(const char* what, long rc, int want_errno) {
  int got = errno;
  int ok = want_errno == kSentinel ? rc >= 0 : rc < 0;
  if (!ok || got != want_errno) {
    fprintf(stderr, "shim_errno: %s: rc %ld, errno %d (%s), expected %d\n", what, rc, got, strerror(got), want_errno);
    exit(1);
  }
}

int main(void) {
  int fd = open("file", O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return 1;
  close(fd);
#define PASSING(call) errno = kSentinel, Expect(#call, (call), kSentinel)
#define FAILING(call, err) errno = kSentinel, Expect(#call, (call), err)
  PASSING(fd = open("file", O_RDWR));
  PASSING(write(fd, "x", 1));  // the lazy capture's first change
  PASSING(ftruncate(fd, 0));
  PASSING(close(fd));
  PASSING(rename("file", "moved"));
  PASSING(chmod("moved", 0600));
  PASSING(mkdir("dir", 0755));
  PASSING(rmdir("dir"));
  PASSING(unlink("moved"));
  FAILING(open("missing/file", O_WRONLY | O_CREAT, 0644), ENOENT);
  FAILING(open("missing", O_RDONLY), ENOENT);
  FAILING(unlink("missing"), ENOENT);
  FAILING(rename("missing", "other"), ENOENT);
  FAILING(mkdir(".", 0755), EEXIST);
  FAILING(write(-1, "x", 1), EBADF);
  FAILING(ftruncate(-1, 0), EBADF);
  PASSING(posix_fallocate(-1, 0, 1) == EBADF ? 0 : -1);  // returns its error, errno untouched
  return 0;
}
