// Sends SIGTERM to its own process group, as a program cleaning up its
// children does with kill(0, SIGTERM), then counts how many SIGTERMs it
// receives within half a second, and prints the count. Under guard, which
// is in the same group, guard receives the signal too and must not pass it
// on a second time: the count must be 1.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t received;

static void OnTerm(int sig) {
  (void)sig;
  ++received;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = OnTerm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  if (kill(0, SIGTERM) != 0) {
    perror("group_signal_count: kill");
    return 1;
  }
  struct timespec left = {0, 500 * 1000 * 1000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  printf("%d\n", (int)received);
  return 0;
}
