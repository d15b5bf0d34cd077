// Makes one kind of file-changing call COUNT times in its cwd, each time on
// new names where the kind allows, and exits 0; exits 1 at the first call
// that fails. For durability_kill_inside_call_test.cc, which has guard kill
// it (or itself) inside one of those calls.
//
//   call_loop KIND COUNT [OUTSIDE]
//
// Iteration i, by KIND:
//   create         creates f<i>
//   append         appends "<i>\n" to a.txt
//   rename         renames a.txt (i = 0) or r<i-1> to r<i>
//   rename-dir     renames directory d (i = 0) or d<i-1> to d<i>
//   rename-dir-in  makes OUTSIDE/src<i>/f and renames OUTSIDE/src<i> to in<i>
//   rename-over    writes t<i> and renames it over a.txt
//   unlink         writes f<i> and unlinks it
//   mkdir          makes directory d<i>
//   symlink        makes symlink s<i> -> "target <i>"
//   link           makes hard link l<i> to a.txt
//   chmod          sets a.txt's mode to 0600 (odd i) or 0640 (even i)
//   exchange       exchanges a.txt and b.txt (RENAME_EXCHANGE); i = 0 first
//                  writes b.txt, longer than a.txt
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static const char* kind;
static int iteration;

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "call_loop %s: iteration %d: %s failed: %s\n", kind, iteration, what, strerror(errno));
    exit(1);
  }
}

static void WriteFile(const char* path, const char* text, int flags) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  Check(fd >= 0, path);
  Check(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
  Check(close(fd) == 0, "close");
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: call_loop KIND COUNT [OUTSIDE]\n");
    return 2;
  }
  kind = argv[1];
  int count = atoi(argv[2]);
  const char* outside = argc > 3 ? argv[3] : ".";
  char a[2048], b[4200], text[64];
  for (iteration = 0; iteration < count; ++iteration) {
    int i = iteration;
    if (strcmp(kind, "create") == 0) {
      snprintf(a, sizeof a, "f%d", i);
      WriteFile(a, "", O_TRUNC);
    } else if (strcmp(kind, "append") == 0) {
      snprintf(text, sizeof text, "%d\n", i);
      WriteFile("a.txt", text, O_APPEND);
    } else if (strcmp(kind, "rename") == 0 || strcmp(kind, "rename-dir") == 0) {
      const char* base = strcmp(kind, "rename") == 0 ? "r" : "d";
      if (i == 0) snprintf(a, sizeof a, "%s", strcmp(kind, "rename") == 0 ? "a.txt" : "d");
      else snprintf(a, sizeof a, "%s%d", base, i - 1);
      snprintf(b, sizeof b, "%s%d", base, i);
      Check(rename(a, b) == 0, "rename");
    } else if (strcmp(kind, "rename-dir-in") == 0) {
      snprintf(a, sizeof a, "%s/src%d", outside, i);
      Check(mkdir(a, 0755) == 0, "mkdir");
      snprintf(b, sizeof b, "%s/f", a);
      snprintf(text, sizeof text, "from outside %d\n", i);
      WriteFile(b, text, O_TRUNC);
      snprintf(b, sizeof b, "in%d", i);
      Check(rename(a, b) == 0, "rename");
    } else if (strcmp(kind, "rename-over") == 0) {
      snprintf(a, sizeof a, "t%d", i);
      snprintf(text, sizeof text, "version %d\n", i);
      WriteFile(a, text, O_TRUNC);
      Check(rename(a, "a.txt") == 0, "rename");
    } else if (strcmp(kind, "unlink") == 0) {
      snprintf(a, sizeof a, "f%d", i);
      snprintf(text, sizeof text, "doomed %d\n", i);
      WriteFile(a, text, O_TRUNC);
      Check(unlink(a) == 0, "unlink");
    } else if (strcmp(kind, "mkdir") == 0) {
      snprintf(a, sizeof a, "d%d", i);
      Check(mkdir(a, 0755) == 0, "mkdir");
    } else if (strcmp(kind, "symlink") == 0) {
      snprintf(a, sizeof a, "target %d", i);
      snprintf(b, sizeof b, "s%d", i);
      Check(symlink(a, b) == 0, "symlink");
    } else if (strcmp(kind, "link") == 0) {
      snprintf(b, sizeof b, "l%d", i);
      Check(link("a.txt", b) == 0, "link");
    } else if (strcmp(kind, "chmod") == 0) {
      Check(chmod("a.txt", i % 2 ? 0600 : 0640) == 0, "chmod");
    } else if (strcmp(kind, "exchange") == 0) {
      if (i == 0) WriteFile("b.txt", "the other file, longer than the first one\n", O_TRUNC);
      Check(syscall(SYS_renameat2, AT_FDCWD, "a.txt", AT_FDCWD, "b.txt", RENAME_EXCHANGE) == 0, "renameat2");
    } else {
      fprintf(stderr, "call_loop: unknown kind %s\n", kind);
      return 2;
    }
  }
  return 0;
}
