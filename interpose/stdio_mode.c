#include "interpose/stdio_mode.h"

#include <fcntl.h>
#include <string.h>

int shim_stdio_mode_parse(const char* mode, struct shim_stdio_mode* m) {
  memset(m, 0, sizeof *m);
  int access;
  switch (mode[0]) {
    case 'r': access = O_RDONLY; break;
    case 'w': access = O_WRONLY; m->flags = O_CREAT | O_TRUNC; break;
    case 'a': access = O_WRONLY; m->flags = O_CREAT | O_APPEND; break;
    default: return 0;
  }
  int plus = 0;
  /* glibc's loop: i from 1 to 6, ending at NUL or ','. */
  for (int i = 1; i < 7; ++i) {
    char ch = mode[i];
    if (ch == '\0' || ch == ',') break;
    switch (ch) {
      case '+': plus = 1; break;
      case 'x': m->flags |= O_EXCL; break;
      case 'e': m->flags |= O_CLOEXEC; m->cloexec = 1; break;
      case 'm': m->mmap = 1; break;
      case 'c': m->real_only = 1; break;
      default: break; /* 'b' and anything else: ignored */
    }
  }
  if (plus) access = O_RDWR;
  m->flags |= access;
  /* glibc looks for the conversion after the last character it recognised;
   * anywhere in the string is the cautious reading (the real function then
   * decides). */
  if (strstr(mode, ",ccs=") != NULL) m->real_only = 1;
  m->seek_end = mode[0] == 'a' && !plus;
  m->fdopen_mode[0] = mode[0];
  m->fdopen_mode[1] = plus ? '+' : '\0';
  m->fdopen_mode[2] = '\0';
  return 1;
}

int shim_stdio_mode_reads_only(const struct shim_stdio_mode* m) {
  return (m->flags & O_ACCMODE) == O_RDONLY && !(m->flags & (O_CREAT | O_TRUNC));
}
