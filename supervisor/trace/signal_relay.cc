#include "supervisor/trace/signal_relay.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace guard {
namespace {

volatile pid_t g_command_pid = -1;
volatile pid_t g_tracer_tid = -1;  // the thread that traces the command: its tracees' TracerPid
volatile sig_atomic_t g_relayed = 0;  // signals passed on (written by Relay only)

constexpr int kRelayed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM};
constexpr int kTerminalStops[] = {SIGTSTP, SIGTTIN, SIGTTOU};

// Reads /proc/PID/<name> into buf (NUL-terminated); its length, or -1.
// Async-signal-safe: open, read, close and hand-made formatting.
ssize_t ReadProcFile(pid_t pid, const char* name, char* buf, size_t cap) {
  char path[48] = "/proc/";
  char digits[12];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(pid); v != 0 || n == 0; v /= 10) {
    digits[n++] = static_cast<char>('0' + v % 10);
  }
  size_t len = 6;
  while (n > 0) path[len++] = digits[--n];
  path[len++] = '/';
  for (size_t i = 0; name[i] != '\0' && len + 1 < sizeof path; ++i) path[len++] = name[i];
  path[len] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = read(fd, buf, cap - 1);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  return got;
}

// Whether process `pid` is traced by guard, i.e. is the command or one of
// its processes: /proc/PID/status says "TracerPid:\t<g_tracer_tid>".
bool IsTracee(pid_t pid) {
  char buf[2048];
  if (ReadProcFile(pid, "status", buf, sizeof buf) < 0) return false;
  const char* p = strstr(buf, "\nTracerPid:");
  if (p == nullptr) return false;
  p += 12;
  while (*p == '\t' || *p == ' ') ++p;
  long tracer = 0;
  while (*p >= '0' && *p <= '9') tracer = tracer * 10 + (*p++ - '0');
  return tracer != 0 && tracer == g_tracer_tid;
}

// The parent of `pid`, from /proc/PID/stat ("pid (comm) state ppid ..."),
// or -1.
pid_t ParentOf(pid_t pid) {
  char buf[1024];
  if (ReadProcFile(pid, "stat", buf, sizeof buf) < 0) return -1;
  const char* p = strrchr(buf, ')');  // the name may hold anything but ends there
  if (p == nullptr || p[1] != ' ' || p[2] == '\0' || p[3] != ' ') return -1;
  p += 4;
  long ppid = 0;
  while (*p >= '0' && *p <= '9') ppid = ppid * 10 + (*p++ - '0');
  return static_cast<pid_t>(ppid);
}

// Whether `pid` descends from the supervisor (this process, or for the
// front the back, whose thread g_tracer_tid is): under --mode preload
// nothing is traced, and the command's processes are the supervisor's
// descendants (it is their subreaper: untraced_run.h).
bool IsDescendant(pid_t pid) {
  pid_t self = getpid();
  for (int depth = 0; depth < 256 && pid > 1; ++depth) {
    pid = ParentOf(pid);
    if (pid == self || pid == g_tracer_tid) return true;
  }
  return false;
}

void Relay(int sig, siginfo_t* info, void*) {
  int saved = errno;
  // A signal from the terminal (SI_KERNEL) has been sent to the whole
  // foreground group, the command included. So has one that the command
  // itself (or a process it started) sent to its group with kill(0, ...).
  // One from any other process was meant for guard alone (`kill PID` by a
  // script, a supervisor or a test harness, which often share guard's
  // process group) and must be passed on, or the command never sees it.
  bool whole_group = info->si_code == SI_KERNEL ||
                     (info->si_code <= 0 && info->si_pid > 0 && getpgid(info->si_pid) == getpgrp() &&
                      (IsTracee(info->si_pid) || IsDescendant(info->si_pid)));
  if (!whole_group && g_command_pid > 0) {
    kill(g_command_pid, sig);
    g_relayed = g_relayed + 1;
  }
  errno = saved;
}

// The signals the kernel raises for a fault of the thread itself: returning
// from a handler would fault again.
bool IsFault(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

// Whether `sig`'s default action leaves a process running.
bool DefaultIsHarmless(int sig) {
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

void Shrug(int sig, siginfo_t* info, void*) {
  // guard's own raise() or abort(): what the signal would have done.
  const bool own = info->si_code <= 0 && info->si_pid == getpid();
  // A fault of guard's: the kernel's, never a process's.
  const bool fault = IsFault(sig) && info->si_code > 0;
  // Anything else was sent by another process (kill, sigqueue, tgkill),
  // or by the kernel for an fd whose owner (F_SETOWN) another process made
  // guard, with the signal it chose (F_SETSIG): ignored.
  if (!own && !fault) return;
  int saved = errno;
  signal(sig, SIG_DFL);
  if (!fault) raise(sig);  // a fault comes again when the handler returns
  errno = saved;
}

}  // namespace

void ShrugSignalsFromOthers() {
  struct sigaction shrug = {};
  shrug.sa_sigaction = Shrug;
  shrug.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&shrug.sa_mask);
  for (int sig = 1; sig <= SIGRTMAX; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP || DefaultIsHarmless(sig)) continue;
    if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) continue;  // job control's (InstallSignalRelay)
    struct sigaction old = {};
    // glibc's own real-time signals refuse sigaction: left as they are.
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == SIG_DFL) sigaction(sig, &shrug, nullptr);
  }
}

void InstallSignalRelay(pid_t command_pid, pid_t tracer_tid) {
  g_command_pid = command_pid;
  // By default called on the thread that seized the command (run_command.cc).
  g_tracer_tid = tracer_tid != 0 ? tracer_tid : static_cast<pid_t>(syscall(SYS_gettid));
  struct sigaction sa = {};
  sa.sa_sigaction = Relay;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  for (int sig : kRelayed) sigaction(sig, &sa, nullptr);
  struct sigaction ign = {};
  ign.sa_handler = SIG_IGN;
  for (int sig : kTerminalStops) sigaction(sig, &ign, nullptr);
  sigaction(SIGPIPE, &ign, nullptr);
  ShrugSignalsFromOthers();
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
  ContinueCommand();
}

unsigned RelayedCount() { return static_cast<unsigned>(g_relayed); }

sigset_t RelayedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kRelayed) sigaddset(&set, sig);
  return set;
}

void ContinueCommand() {
  if (g_command_pid > 0) kill(g_command_pid, SIGCONT);
}

}  // namespace guard
