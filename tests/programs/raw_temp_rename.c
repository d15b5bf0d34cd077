// Writes a file the way Claude Code's Bun threads do: a temporary file
// created and written by raw system calls (the instruction itself,
// raw_syscall.h: no LD_PRELOAD shim sees it), then renamed over its destination through libc's rename
// (which the shim sees). Then one more file made by raw calls alone, and
// a directory. Run in a tree holding settings.json (auto_without_ptrace_test).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "raw_syscall.h"

static int RawWrite(const char* name, const char* text) {
  long fd = raw_syscall4(SYS_openat, AT_FDCWD, (long)name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fprintf(stderr, "%s: openat: %ld\n", name, fd), -1;
  if (raw_syscall4(SYS_write, fd, (long)text, (long)strlen(text), 0) != (long)strlen(text)) return -1;
  return (int)raw_syscall4(SYS_close, fd, 0, 0, 0);
}

int main(void) {
  if (RawWrite("settings.json.tmp.4242", "{\"theme\": \"dark\"}\n") != 0) return 1;
  if (rename("settings.json.tmp.4242", "settings.json") != 0) return perror("rename"), 1;
  if (RawWrite("raw-only.txt", "made where no shim sees\n") != 0) return 1;
  if (raw_syscall4(SYS_mkdirat, AT_FDCWD, (long)"raw-dir", 0755, 0) != 0) return fprintf(stderr, "mkdirat\n"), 1;
  if (RawWrite("raw-dir/inside.txt", "below a raw directory\n") != 0) return 1;
  return 0;
}
