// Rewrites a file without naming it in the call that opens it: gets the
// file's handle with name_to_handle_at(2), then opens the handle for writing
// with open_by_handle_at(2) and O_TRUNC (which needs CAP_DAC_READ_SEARCH,
// as root in a container has). The open carries the write flags, not a path.
//
// usage: open_by_handle_writer FILE TEXT
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: open_by_handle_writer FILE TEXT\n");
    return 2;
  }
  struct file_handle* handle = malloc(sizeof *handle + MAX_HANDLE_SZ);
  handle->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  if (name_to_handle_at(AT_FDCWD, argv[1], handle, &mount_id, 0) != 0) {
    perror("open_by_handle_writer: name_to_handle_at");
    return 1;
  }
  int mount_fd = open(".", O_RDONLY | O_DIRECTORY);
  int fd = open_by_handle_at(mount_fd, handle, O_WRONLY | O_TRUNC);
  if (fd < 0) {
    perror("open_by_handle_writer: open_by_handle_at");
    return 1;
  }
  size_t len = strlen(argv[2]);
  if (write(fd, argv[2], len) != (ssize_t)len) {
    perror("open_by_handle_writer: write");
    return 1;
  }
  close(fd);
  close(mount_fd);
  free(handle);
  return 0;
}
