// A signal handler that writes a file while its thread is inside an
// interposed call, run with the shim preloaded and GUARD_SHIM_TEST_RAISE
// set to SIGUSR1: the shim raises it inside its own work for the first call
// it reports (the first open below), so the handler runs with the shim's
// reentrancy guard held. Its calls must then go straight to the real
// functions (not classified, nothing lost), the file must be complete, and
// the interrupted unlink must finish as without the handler. A second
// handler run, from kill() outside any interposed call, is classified
// as usual.
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t runs;

static void Handler(int sig) {
  (void)sig;
  const char* name = runs == 0 ? "from-handler-inside" : "from-handler-outside";
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    (void)!write(fd, "written by the handler\n", 23);
    close(fd);
  }
  ++runs;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = Handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
  int fd = open("victim", O_WRONLY | O_CREAT | O_EXCL, 0644);  // first report: raises inside
  if (fd < 0 || runs != 1) return 2;
  close(fd);
  if (unlink("victim") != 0) return 3;
  if (kill(getpid(), SIGUSR1) != 0 || runs != 2) return 4;
  return access("victim", F_OK) == 0 ? 5 : 0;
}
