// A vfork child that opens, writes and execs (as Bun's spawn does), run
// with the shim preloaded. The child borrows its parent's memory: the shim
// must not change the parent's fd marks or leave the parent's reentrancy
// guard held. So: the parent opens "mine" O_RDWR (fd N, marked pending);
// the child closes its fd N, opens "theirs" O_RDWR (its own fd N, the
// lowest free one again, captured at the open, not marked), writes, and
// execs true. The parent then writes to its fd N, which must still be its
// first change (the shim's line says so), and its next calls are still
// classified.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int fd = open("mine", O_RDWR | O_CREAT, 0644);
  if (fd < 0) return 1;
  pid_t pid = vfork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(fd);
    int theirs = open("theirs", O_RDWR | O_CREAT, 0644);
    if (theirs != fd || write(theirs, "child\n", 6) != 6) _exit(2);
    char* argv[] = {"true", NULL};
    char* envp[] = {NULL};
    execve("/bin/true", argv, envp);
    _exit(3);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
  if (write(fd, "parent\n", 7) != 7) return 5;
  if (unlink("mine") != 0) return 6;
  return 0;
}
