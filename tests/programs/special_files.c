/* special_files MODE ...: files the kernel makes on a process's behalf
 * without an open (issue 11, items 2 and 13).
 *
 *   bind PATH     bind a unix stream socket to PATH, then exit (the socket
 *                 file stays, as a server that died leaves it)
 *   crash         raise the core limit to unlimited and die of SIGSEGV with
 *                 its default action (a core dump, where core_pattern is a
 *                 file name)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "bind") == 0) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return perror("socket"), 1;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(argv[2]) >= sizeof addr.sun_path) return fprintf(stderr, "path too long\n"), 2;
    strcpy(addr.sun_path, argv[2]);
    if (bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0) return perror("bind"), 1;
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "crash") == 0) {
    struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_CORE, &unlimited) != 0) return perror("setrlimit"), 1;
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    return 1;  // not reached
  }
  fprintf(stderr, "usage: see the comment at the top of special_files.c\n");
  return 2;
}
