// Changes files through stdio and the mkstemp family, in the current
// directory, as C programs and sed do (tests/e2e/auto_mode_test.cc runs it
// under guard --mode auto): fopen "w", "a", "r+" of existing files, a new
// file, freopen of one stream onto two files, and a mkstemp file written
// and renamed over an existing one. Exits non-zero at the first step that
// fails, naming it.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char* step) {
  fprintf(stderr, "stdio_writer: %s: %s\n", step, strerror(errno));
  return 1;
}

static int put(const char* path, const char* mode, const char* text) {
  FILE* f = fopen(path, mode);
  if (f == NULL) return -1;
  if (fwrite(text, 1, strlen(text), f) != strlen(text)) return -1;
  return fclose(f);
}

int main(void) {
  if (put("truncated.txt", "w", "rewritten\n") != 0) return fail("fopen w");
  if (put("appended.txt", "a", "appended\n") != 0) return fail("fopen a");
  if (put("updated.txt", "r+", "UP") != 0) return fail("fopen r+");
  if (put("new.txt", "wx", "new\n") != 0) return fail("fopen wx");
  FILE* f = fopen("source.txt", "r");
  if (f == NULL) return fail("fopen r");
  if (freopen("reopened-w.txt", "w", f) != f || fputs("reopened\n", f) < 0) return fail("freopen w");
  if (freopen("reopened-a.txt", "a", f) != f || fputs("reopened\n", f) < 0) return fail("freopen a");
  if (fclose(f) != 0) return fail("fclose");
  char name[] = "./tmpXXXXXX";
  int fd = mkstemp(name);
  if (fd < 0 || write(fd, "replacement\n", 12) != 12 || close(fd) != 0) return fail("mkstemp");
  if (rename(name, "replaced.txt") != 0) return fail("rename");
  return 0;
}
