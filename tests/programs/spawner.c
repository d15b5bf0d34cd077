// Starts a command the way libc's process helpers do, with a child that
// shares the parent's memory until it execs: posix_spawnp (clone with
// CLONE_VM|CLONE_VFORK in glibc) or vfork + execvp. Waits for it and exits
// with its status.
//
// usage: spawner posix_spawn|vfork CMD [ARG...]
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: spawner posix_spawn|vfork CMD [ARG...]\n");
    return 2;
  }
  pid_t pid;
  if (strcmp(argv[1], "posix_spawn") == 0) {
    int err = posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ);
    if (err != 0) {
      fprintf(stderr, "spawner: posix_spawnp %s: %s\n", argv[2], strerror(err));
      return 127;
    }
  } else if (strcmp(argv[1], "vfork") == 0) {
    pid = vfork();
    if (pid == 0) {
      execvp(argv[2], argv + 2);
      _exit(127);
    }
    if (pid < 0) {
      perror("spawner: vfork");
      return 1;
    }
  } else {
    fprintf(stderr, "spawner: unknown mode %s\n", argv[1]);
    return 2;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    perror("spawner: waitpid");
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
