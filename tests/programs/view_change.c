/* view_change HOW WARMUP ... : one thread that makes a call guard stops
 * (it removes WARMUP), then changes its own view of the filesystem, then
 * writes "changed\n" over a file of the tree by a name that only the new
 * view gives it. guard keeps each thread's view between calls
 * (supervisor/trace/tracee_views.h); a view kept from the first call would
 * resolve the write's name wrongly, and the write would go unrecorded.
 *
 *   unshare-bind WARMUP TREE ALIAS NAME   unshare(CLONE_NEWNS), mounts made
 *       private, TREE bound at ALIAS, then ALIAS/NAME written;
 *   chroot WARMUP JAIL NAME               chroot(JAIL), chdir("/"), then
 *       /NAME written (JAIL/NAME in guard's names).
 *
 * Every step is one raw call in this process, so the same thread id makes
 * both stopped calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static int Fail(const char* what, const char* arg) {
  fprintf(stderr, "view_change: %s %s: %s\n", what, arg, strerror(errno));
  return 1;
}

static int WriteChanged(const char* path) {
  int fd = open(path, O_WRONLY | O_TRUNC);
  if (fd < 0) return Fail("open", path);
  static const char kText[] = "changed\n";
  if (write(fd, kText, sizeof kText - 1) != (ssize_t)(sizeof kText - 1)) return Fail("write", path);
  return close(fd) == 0 ? 0 : Fail("close", path);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: view_change unshare-bind WARMUP TREE ALIAS NAME | chroot WARMUP JAIL NAME\n");
    return 2;
  }
  const char* how = argv[1];
  if (unlink(argv[2]) != 0) return Fail("unlink", argv[2]);
  char path[4096];
  if (strcmp(how, "unshare-bind") == 0 && argc == 6) {
    if (unshare(CLONE_NEWNS) != 0) return Fail("unshare", "CLONE_NEWNS");
    if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return Fail("mount --make-rprivate", "/");
    if (mount(argv[3], argv[4], NULL, MS_BIND, NULL) != 0) return Fail("mount --bind", argv[3]);
    snprintf(path, sizeof path, "%s/%s", argv[4], argv[5]);
    return WriteChanged(path);
  }
  if (strcmp(how, "chroot") == 0 && argc == 5) {
    if (chroot(argv[3]) != 0) return Fail("chroot", argv[3]);
    if (chdir("/") != 0) return Fail("chdir", "/");
    snprintf(path, sizeof path, "/%s", argv[4]);
    return WriteChanged(path);
  }
  fprintf(stderr, "view_change: unknown form %s\n", how);
  return 2;
}
