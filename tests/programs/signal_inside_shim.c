/* signal_inside_shim: a signal handler that changes files while its thread
 * is inside the shim's own work for another call. The shim cannot capture
 * the handler's calls; where nothing else would record them either, they
 * follow the capture-failure policy (interpose/linux/reentered.h) rather
 * than run unseen (session 19's F6).
 *
 *   signal_inside_shim path|fd   in a directory holding "doomed" and "log":
 *     re-execs itself with GUARD_SHIM_TEST_FD (to /dev/null),
 *     GUARD_SHIM_TEST_RAISE=SIGUSR1 and GUARD_SHIM_TEST_RAISE_AT=2, then
 *     1. opens "log" for appending: report 1, its first-change capture
 *        pending (fd_marks.h);
 *     2. creates "trigger" (O_TRUNC): report 2, where the shim raises
 *        SIGUSR1 inside its own work, and the handler
 *          path: unlinks "doomed" and makes "by-handler";
 *          fd:   appends a line to "log" through the pending fd;
 *     3. appends its own line to "log".
 *   Prints the handler's results on stdout: "handler: <result>..." with
 *   each call's "ok" or errno name, or "handler: not run" (no shim: --mode
 *   trace).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/shim_interface.h"

extern char** environ;

static int path_way;
static int log_fd = -1;
static volatile sig_atomic_t ran;
static int results[2];
static int nresults;

static void note(int rc) { results[nresults++] = rc < 0 ? errno : 0; }

static void handler(int sig) {
  (void)sig;
  int saved = errno;
  if (path_way) {
    note(unlink("doomed"));
    int fd = open("by-handler", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    note(fd);
    if (fd >= 0) {
      (void)!write(fd, "made by the handler\n", 20);
      close(fd);
    }
  } else {
    note((int)write(log_fd, "the handler's line\n", 19));
  }
  ran = 1;
  errno = saved;
}

static int reexec(char** argv) {
  int null_fd = open("/dev/null", O_WRONLY); /* inherited by the new image */
  if (null_fd < 0) return 1;
  size_t n = 0;
  while (environ[n] != NULL) ++n;
  char** env = calloc(n + 5, sizeof *env);
  if (env == NULL) return 1;
  memcpy(env, environ, n * sizeof *env);
  char fd_var[64];
  snprintf(fd_var, sizeof fd_var, GUARD_ENV_SHIM_TEST_FD "=%d", null_fd);
  char raise_var[64];
  snprintf(raise_var, sizeof raise_var, GUARD_ENV_SHIM_TEST_RAISE "=%d", SIGUSR1);
  env[n++] = fd_var;
  env[n++] = raise_var;
  env[n++] = GUARD_ENV_SHIM_TEST_RAISE_AT "=2";
  env[n++] = "SIGNAL_INSIDE_SHIM_CHILD=1";
  char* args[] = {argv[0], argv[1], NULL};
  execve("/proc/self/exe", args, env);
  perror("execve");
  return 127;
}

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "path") != 0 && strcmp(argv[1], "fd") != 0)) {
    fprintf(stderr, "usage: signal_inside_shim path|fd\n");
    return 2;
  }
  if (getenv("SIGNAL_INSIDE_SHIM_CHILD") == NULL) return reexec(argv);
  path_way = strcmp(argv[1], "path") == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
  log_fd = open("log", O_WRONLY | O_APPEND);
  if (log_fd < 0) {
    perror("log");
    return 1;
  }
  int fd = open("trigger", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror("trigger");
    return 1;
  }
  (void)!write(fd, "trigger\n", 8);
  close(fd);
  if (write(log_fd, "the program's line\n", 19) != 19) {
    perror("log");
    return 1;
  }
  close(log_fd);
  if (!ran) {
    printf("handler: not run\n");
    return 0;
  }
  printf("handler:");
  for (int i = 0; i < nresults; ++i) printf(" %s", results[i] == 0 ? "ok" : strerrorname_np(results[i]));
  printf("\n");
  return 0;
}
