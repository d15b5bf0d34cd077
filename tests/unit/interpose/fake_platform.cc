// shim_platform.h for the shim's unit tests: the calls the shared part
// makes, done by this process (the test report goes nowhere: the tests
// never configure it).
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <fcntl.h>

#include "interpose/shim_platform.h"

extern "C" {

int shim_platform_write_all(int fd, const void* buf, size_t len) {
  return write(fd, buf, len) == static_cast<ssize_t>(len) ? 0 : -1;
}
int shim_platform_getpid(void) { return getpid(); }
void shim_platform_raise(int sig) { raise(sig); }
void shim_platform_yield(void) { sched_yield(); }
int shim_platform_fd_cloexec(int fd) {
  int flags = fcntl(fd, F_GETFD);
  return flags < 0 ? -1 : (flags & FD_CLOEXEC) ? 1 : 0;
}

// No ring in the unit tests: nothing is captured, every call is the tracer's.
int shim_platform_capturing(void) { return 0; }
int shim_platform_alone(void) { return 0; }
int shim_platform_capture_fd(int) { return 0; }

}  // extern "C"
