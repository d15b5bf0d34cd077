// A program that clears its environment and starts itself again, through
// one of the calls named by argv[1]; the new image (argv[1] == "check")
// exits 0 if the shim is loaded in it and GUARD_SHIM_TEST_FD came back,
// 3 if not. Run with the shim preloaded.
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/shim_interface.h"

static int ShimLoaded(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (maps && fgets(line, sizeof line, maps)) found |= strstr(line, "guard-shim") != NULL;
  if (maps) fclose(maps);
  return found;
}

static int Propagate(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 100; }

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  const char* how = argv[1];
  if (!strcmp(how, "check")) return ShimLoaded() && getenv(GUARD_ENV_SHIM_TEST_FD) ? 0 : 3;
  const char* self = "/proc/self/exe";
  char self_path[4096];
  ssize_t n = readlink(self, self_path, sizeof self_path - 1);
  if (n <= 0) return 1;
  self_path[n] = '\0';
  char* args[] = {self_path, "check", NULL};
  char* empty[] = {NULL};
  if (clearenv() != 0) return 1;
  if (!strcmp(how, "execve")) execve(self_path, args, empty);
  if (!strcmp(how, "execv")) execv(self_path, args);
  if (!strcmp(how, "execvp")) execvp(self_path, args);
  if (!strcmp(how, "execvpe")) execvpe(self_path, args, empty);
  if (!strcmp(how, "execl")) execl(self_path, self_path, "check", (char*)NULL);
  if (!strcmp(how, "execlp")) execlp(self_path, self_path, "check", (char*)NULL);
  if (!strcmp(how, "execle")) execle(self_path, self_path, "check", (char*)NULL, empty);
  if (!strcmp(how, "fexecve")) {
    int fd = open(self_path, O_RDONLY);
    fexecve(fd, args, empty);
  }
  if (!strcmp(how, "posix_spawn") || !strcmp(how, "posix_spawnp")) {
    pid_t pid;
    int rc = !strcmp(how, "posix_spawn") ? posix_spawn(&pid, self_path, NULL, NULL, args, empty)
                                         : posix_spawnp(&pid, self_path, NULL, NULL, args, empty);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) != pid) return 1;
    return Propagate(status);
  }
  char command[4200];
  snprintf(command, sizeof command, "'%s' check", self_path);
  if (!strcmp(how, "system")) return Propagate(system(command));
  if (!strcmp(how, "popen")) {
    FILE* p = popen(command, "r");
    return p ? Propagate(pclose(p)) : 1;
  }
  return 1;  // the exec failed, or an unknown way
}
