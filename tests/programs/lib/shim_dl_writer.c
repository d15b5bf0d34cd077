// The library shim_dlopen.c loads late: it writes, renames and deletes.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int shim_dl_write_files(void) {
  int fd = open("dl-written", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "from a dlopened library\n", 24) != 24) return 1;
  close(fd);
  if (rename("dl-written", "dl-renamed") != 0) return 2;
  return unlink("dl-renamed") == 0 ? 0 : 3;
}
