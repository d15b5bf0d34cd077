#include "supervisor/signal_relay.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace guard {
namespace {

volatile pid_t g_command_pid = -1;

constexpr int kRelayed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM};
constexpr int kTerminalStops[] = {SIGTSTP, SIGTTIN, SIGTTOU};

void Relay(int sig, siginfo_t* info, void*) {
  int saved = errno;
  // A signal from the terminal (SI_KERNEL) or from a process of our own group
  // (kill(0, ...) by the command) has been sent to the command as well.
  bool from_group = info->si_code == SI_KERNEL ||
                    (info->si_code <= 0 && info->si_pid > 0 && getpgid(info->si_pid) == getpgrp());
  if (!from_group && g_command_pid > 0) kill(g_command_pid, sig);
  errno = saved;
}

}  // namespace

void InstallSignalRelay(pid_t command_pid) {
  g_command_pid = command_pid;
  struct sigaction sa = {};
  sa.sa_sigaction = Relay;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  for (int sig : kRelayed) sigaction(sig, &sa, nullptr);
  struct sigaction ign = {};
  ign.sa_handler = SIG_IGN;
  for (int sig : kTerminalStops) sigaction(sig, &ign, nullptr);
  sigaction(SIGPIPE, &ign, nullptr);
}

void StopLike(int sig) {
  if (sig == SIGSTOP) {
    raise(SIGSTOP);
  } else {
    struct sigaction dfl = {}, old = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, &old);
    raise(sig);  // guard stops here until SIGCONT
    sigaction(sig, &old, nullptr);
  }
  if (g_command_pid > 0) kill(g_command_pid, SIGCONT);
}

}  // namespace guard
