/* exec_mid_put SCRIPT: a second thread creates files in the cwd, one after
 * another (under GUARD_SHIM_TEST_SLOW_PUT each of its ring puts sleeps
 * between claim and publication), while the main thread execs
 * `sh -c SCRIPT` once the second thread has begun. An exec that killed the
 * thread mid-put would leave a claim whose owner lives on as the shell:
 * tests/e2e/preload_mode_test.cc. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile int started;

static void* creator(void* arg) {
  (void)arg;
  char name[32];
  for (int i = 0;; ++i) {
    snprintf(name, sizeof name, "made%d", i);
    started = 1;
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: exec_mid_put SCRIPT\n");
    return 2;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, creator, NULL) != 0) return 1;
  while (!started) sched_yield();
  /* Most likely inside its first put's sleep now (it is 100 times longer). */
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  execl("/bin/sh", "sh", "-c", argv[1], (char*)NULL);
  perror("execl");
  return 1;
}
