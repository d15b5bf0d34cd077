/* inbox_thief: what a process of one session does to reach another
 * session's inbox, where that session's shim leaves pre-images before its
 * supervisor takes them (issue 36, "No session can reach another session's
 * ring or pending area"). It lists the sessions under $GUARD_HOME, leaves
 * out its own ($GUARD_SESSION), and for each other one looks for its inbox
 * (<GUARD_HOME>-inbox/<id>, common/state_dir.h): by name; through
 * /proc/PID/root of every other process it can see (the other session's
 * command runs in a mount namespace of its own); and through the fds of
 * every other process (/proc/PID/fd/N whose link names that inbox). Read
 * only: it opens the directory, which is all a stub-jumper needs first.
 * Prints "sessions: N", then "<path>: reached" for each way in, and
 * "tried: M" (how many ways it tried). Exits 0. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tried;

static void attempt(const char* path) {
  ++tried;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    printf("%s: reached\n", path);
    close(fd);
  }
}

int main(void) {
  const char* home = getenv("GUARD_HOME");
  const char* own = getenv("GUARD_SESSION");
  if (home == NULL) return 2;
  char path[4096], inbox[4096];
  int sessions = 0;
  snprintf(path, sizeof path, "%s/sessions", home);
  DIR* d = opendir(path);
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || (own != NULL && strcmp(own, e->d_name) == 0)) continue;
    ++sessions;
    snprintf(inbox, sizeof inbox, "%s-inbox/%s", home, e->d_name);
    attempt(inbox);
    DIR* proc = opendir("/proc");
    for (struct dirent* p; proc != NULL && (p = readdir(proc)) != NULL;) {
      long pid = strtol(p->d_name, NULL, 10);
      if (pid <= 0 || pid == getpid()) continue;
      snprintf(path, sizeof path, "/proc/%ld/root%s", pid, inbox);
      attempt(path);
      char fds[64];
      snprintf(fds, sizeof fds, "/proc/%ld/fd", pid);
      DIR* fd_dir = opendir(fds);
      for (struct dirent* f; fd_dir != NULL && (f = readdir(fd_dir)) != NULL;) {
        if (f->d_name[0] == '.') continue;
        char link[4096];
        snprintf(path, sizeof path, "%s/%s", fds, f->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n < 0) continue;
        link[n] = '\0';
        if (strcmp(link, inbox) == 0) attempt(path);
      }
      if (fd_dir != NULL) closedir(fd_dir);
    }
    if (proc != NULL) closedir(proc);
  }
  if (d != NULL) closedir(d);
  printf("sessions: %d\n", sessions);
  printf("tried: %d\n", tried);
  return 0;
}
