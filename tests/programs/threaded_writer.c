// Several threads of one process change files at the same time: each
// truncates and rewrites its own file, writes a temporary file and renames
// it over its own target, round after round, then deletes its own file.
// Every thread's calls stop in the tracer under their own thread id.
//
// usage: threaded_writer THREADS ROUNDS   (run in a tree holding, for each
// thread i: t<i>.txt, t<i>.out and t<i>.del)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t start;
static int rounds;

static int WriteFile(const char* path, int flags, const char* text) {
  int fd = open(path, flags, 0644);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  close(fd);
  return n == (ssize_t)len ? 0 : -1;
}

static void* Worker(void* arg) {
  long i = (long)arg;
  char txt[32], tmp[32], out[32], del[32], text[64];
  snprintf(txt, sizeof txt, "t%ld.txt", i);
  snprintf(tmp, sizeof tmp, "t%ld.tmp", i);
  snprintf(out, sizeof out, "t%ld.out", i);
  snprintf(del, sizeof del, "t%ld.del", i);
  pthread_barrier_wait(&start);
  for (int r = 0; r < rounds; ++r) {
    snprintf(text, sizeof text, "thread %ld round %d\n", i, r);
    if (WriteFile(txt, O_WRONLY | O_TRUNC, text) != 0 || WriteFile(tmp, O_WRONLY | O_CREAT | O_EXCL, text) != 0 ||
        rename(tmp, out) != 0) {
      fprintf(stderr, "threaded_writer: thread %ld round %d: %s\n", i, r, strerror(errno));
      return (void*)1;
    }
  }
  if (unlink(del) != 0) {
    fprintf(stderr, "threaded_writer: thread %ld: unlink: %s\n", i, strerror(errno));
    return (void*)1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: threaded_writer THREADS ROUNDS\n");
    return 2;
  }
  long threads = strtol(argv[1], NULL, 10);
  rounds = (int)strtol(argv[2], NULL, 10);
  if (threads < 1 || threads > 64 || rounds < 1) return 2;
  pthread_t tid[64];
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (long i = 0; i < threads; ++i) {
    if (pthread_create(&tid[i], NULL, Worker, (void*)i) != 0) return 1;
  }
  int failed = 0;
  for (long i = 0; i < threads; ++i) {
    void* rc = NULL;
    pthread_join(tid[i], &rc);
    failed |= rc != NULL;
  }
  return failed;
}
