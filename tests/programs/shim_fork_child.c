// fork, then calls in the child, run with the shim preloaded: the child
// owns its marks (the shim's atfork handler made it so), so an O_RDWR open
// in the child is captured lazily as in any process, and an fd the parent
// left pending is the child's to capture at its first change.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int inherited = open("inherited", O_RDWR | O_CREAT, 0644);
  if (inherited < 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    int fd = open("child-file", O_RDWR | O_CREAT, 0644);
    if (fd < 0 || write(fd, "c", 1) != 1) _exit(2);
    if (write(inherited, "i", 1) != 1) _exit(3);
    if (rename("child-file", "child-renamed") != 0) _exit(4);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 5;
  return WEXITSTATUS(status);
}
