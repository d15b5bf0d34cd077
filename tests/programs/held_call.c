/* held_call: a thread the tracer holds (its call names a name another
 * thread's call, let run without an exit stop, was on) must not wait for
 * ever on a thread that makes no further stop: here that thread waits for
 * the held one, and blocks SIGURG, the signal guard's settle nudge sends.
 * Both calls are raw syscall instructions (the tracer's in every mode that
 * has one).
 *
 *   held_call NAME   (NAME exists, in the current directory)
 *     thread X: unlinks NAME, lets thread H go, and waits for H;
 *     thread H: creates NAME (O_EXCL) and tells X.
 *   A watchdog (SIGALRM, 60 s) ends a run that hangs: exit by signal.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "raw_syscall.h"

static int go[2], done[2];
static const char* name;

static void* creator(void* arg) {
  (void)arg;
  char c;
  if (read(go[0], &c, 1) != 1) return (void*)1;
  long fd = raw_syscall4(SYS_openat, AT_FDCWD, (long)name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "create %s: %s\n", name, strerror((int)-fd));
    return (void*)1;
  }
  close((int)fd);
  if (write(done[1], "d", 1) != 1) return (void*)1;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: held_call NAME\n");
    return 2;
  }
  name = argv[1];
  sigset_t urg;
  sigemptyset(&urg);
  sigaddset(&urg, SIGURG);
  pthread_sigmask(SIG_BLOCK, &urg, NULL);  /* the creator inherits it */
  alarm(60);
  if (pipe(go) != 0 || pipe(done) != 0) return 1;
  pthread_t h;
  if (pthread_create(&h, NULL, creator, NULL) != 0) return 1;
  long r = raw_syscall4(SYS_unlinkat, AT_FDCWD, (long)name, 0, 0);
  if (r != 0) {
    fprintf(stderr, "unlink %s: %s\n", name, strerror((int)-r));
    return 1;
  }
  if (write(go[1], "g", 1) != 1) return 1;
  char c;
  if (read(done[0], &c, 1) != 1) return 1;
  void* rc = NULL;
  pthread_join(h, &rc);
  return rc == NULL ? 0 : 1;
}
