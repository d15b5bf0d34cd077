/* renamed_parent_calls dirfd|cwd DIR NEW: changes files by a single name
 * relative to a directory that was renamed after the program took hold of
 * it, so that the directory's name at the call is NEW, not DIR. The shim
 * takes such a name's parent from the call itself (the dirfd, or the cwd),
 * never by the name it was reached by: the records must name NEW.
 *   dirfd: opens DIR, renames it NEW, then through the fd: unlinkat "gone",
 *          renameat "from" over "victim", openat "trunc" O_TRUNC and writes,
 *          mkdirat "made", unlinkat "made" AT_REMOVEDIR.
 *   cwd:   chdir DIR, renames it NEW (by a dirfd of the start), then by name
 *          alone: unlink "gone", rename "from" over "victim", open "trunc"
 *          O_TRUNC and writes, mkdir "made", rmdir "made".
 * Each call's result is checked: a shim that closed the host's dirfd, or
 * resolved the names elsewhere, makes one fail (exit 1). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char* what) {
  fprintf(stderr, "renamed_parent_calls: %s: %s\n", what, strerror(errno));
  return 1;
}

static int calls(int dirfd) {
  if (unlinkat(dirfd, "gone", 0) != 0) return fail("unlink gone");
  if (renameat(dirfd, "from", dirfd, "victim") != 0) return fail("rename from victim");
  int fd = openat(dirfd, "trunc", O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return fail("open trunc");
  if (write(fd, "new\n", 4) != 4) return fail("write trunc");
  close(fd);
  if (mkdirat(dirfd, "made", 0755) != 0) return fail("mkdir made");
  if (unlinkat(dirfd, "made", AT_REMOVEDIR) != 0) return fail("rmdir made");
  /* The dirfd is still the program's: a shim that closed it would fail here. */
  struct stat st;
  if (fstatat(dirfd, "victim", &st, 0) != 0) return fail("stat victim");
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[1], "dirfd") != 0 && strcmp(argv[1], "cwd") != 0)) {
    fprintf(stderr, "usage: renamed_parent_calls dirfd|cwd DIR NEW\n");
    return 2;
  }
  int start = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (start < 0) return fail("open .");
  if (strcmp(argv[1], "dirfd") == 0) {
    int dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return fail("open DIR");
    if (renameat(start, argv[2], start, argv[3]) != 0) return fail("rename DIR");
    int rc = calls(dir);
    if (rc == 0 && close(dir) != 0) return fail("close DIR");
    return rc;
  }
  if (chdir(argv[2]) != 0) return fail("chdir DIR");
  if (renameat(start, argv[2], start, argv[3]) != 0) return fail("rename DIR");
  return calls(AT_FDCWD);
}
