/* stop_supervisor VICTIM: a process of the session that tries to stop or
 * kill guard, found as a hostile process finds it: its parent, named
 * "guard" in /proc, and that one's parent, the front, named so too.
 *
 * For each way (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
 * pidfd_send_signal, prlimit64 lowering RLIMIT_FSIZE, fcntl F_SETSIG) it
 * prints "refused: WAY" when the call failed with EPERM, and "REACHED: WAY"
 * when it ran; a SIGSTOP that reached guard is undone at once with SIGCONT
 * (this process runs on: it makes no call the stopped tracer would have to
 * see), a limit put back, so that the test fails rather than hangs. SIGKILL
 * comes last. Signals guard can take (SIGVTALRM, SIGPROF, SIGUSR2 from here,
 * a SIGSEGV sent by kill) must leave it running: "survived: SIG" or
 * "KILLED: SIG".
 *
 * Then a child leaves the group (setpgid) and sends SIGSTOP to the group it
 * left, which holds guard and this process: this process must stop and
 * guard must not ("group: guard ran on" or "group: GUARD STOPPED"); the
 * child continues this process (and guard, if stopped). Last, VICTIM is
 * unlinked, a change the session must have recorded. Exits 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static pid_t back, front;

static void Sleep(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Field 3 (the state) and 4 (the parent) of /proc/PID/stat; 0 when gone. */
static char StateOf(pid_t pid, pid_t* ppid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char* p = strrchr(buf, ')');
  if (p == NULL || p[1] == '\0') return 0;
  if (ppid != NULL) *ppid = (pid_t)atoi(p + 4);
  return p[2];
}

static int NamedGuard(pid_t pid) {
  char path[64], name[32] = "";
  snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  if (fgets(name, sizeof name, f) == NULL) name[0] = '\0';
  fclose(f);
  return strcmp(name, "guard\n") == 0;
}

/* A thread of the supervisor other than its first, or the first. */
static pid_t SomeThread(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR* d = opendir(path);
  pid_t found = pid;
  if (d == NULL) return found;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    pid_t tid = (pid_t)atoi(e->d_name);
    if (tid > 0 && tid != pid) found = tid;
  }
  closedir(d);
  return found;
}

static int failures;

static const char* Name(int sig) {
  static char rt[16];
  const char* name = sigabbrev_np(sig);
  if (name != NULL) return name;
  snprintf(rt, sizeof rt, "RTMIN+%d", sig - SIGRTMIN);
  return rt;
}

/* One try: `rc` and errno as the call left them. */
static void Judge(const char* way, int sig, long rc, int err, pid_t target) {
  const char* name = Name(sig);
  if (rc == -1 && err == EPERM) {
    printf("refused: %s SIG%s\n", way, name);
  } else {
    printf("REACHED: %s SIG%s (rc %ld, %s)\n", way, name, rc, strerror(err));
    ++failures;
    if (sig == SIGSTOP) kill(target, SIGCONT);
  }
  fflush(stdout);
}

static void TryDirect(int sig) {
  pid_t thread = SomeThread(back);
  long rc;
  rc = kill(back, sig), Judge("kill supervisor", sig, rc, errno, back);
  if (front > 0) rc = kill(front, sig), Judge("kill front", sig, rc, errno, front);
  rc = syscall(SYS_tkill, thread, sig), Judge("tkill", sig, rc, errno, back);
  rc = syscall(SYS_tgkill, back, thread, sig), Judge("tgkill", sig, rc, errno, back);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = getpid();
  si.si_uid = getuid();
  rc = syscall(SYS_rt_sigqueueinfo, back, sig, &si), Judge("rt_sigqueueinfo", sig, rc, errno, back);
  rc = syscall(SYS_rt_tgsigqueueinfo, back, thread, sig, &si), Judge("rt_tgsigqueueinfo", sig, rc, errno, back);
  int pidfd = (int)syscall(SYS_pidfd_open, back, 0);
  if (pidfd < 0) {
    printf("pidfd_open: %s\n", strerror(errno));
    ++failures;
  } else {
    rc = syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0), Judge("pidfd_send_signal", sig, rc, errno, back);
    close(pidfd);
  }
}

static void TryCatchable(int sig) {
  if (kill(back, sig) != 0) printf("kill SIG%s: %s\n", Name(sig), strerror(errno));
  if (front > 0 && kill(front, sig) != 0) printf("kill front SIG%s: %s\n", Name(sig), strerror(errno));
  Sleep(20);
  char s = StateOf(back, NULL), fs = front > 0 ? StateOf(front, NULL) : 'S';
  if (s == 0 || s == 'Z' || fs == 0 || fs == 'Z') {
    printf("KILLED: SIG%s\n", Name(sig));
    ++failures;
  } else {
    printf("survived: SIG%s\n", Name(sig));
  }
  fflush(stdout);
}

static void TryLimit(void) {
  struct rlimit old, none = {0, 0};
  if (syscall(SYS_prlimit64, back, RLIMIT_FSIZE, NULL, &old) != 0) old.rlim_cur = old.rlim_max = RLIM_INFINITY;
  long rc = syscall(SYS_prlimit64, back, RLIMIT_FSIZE, &none, NULL);
  if (rc == -1 && errno == EPERM) {
    printf("refused: prlimit64 RLIMIT_FSIZE\n");
  } else {
    printf("REACHED: prlimit64 RLIMIT_FSIZE (rc %ld)\n", rc);
    ++failures;
    syscall(SYS_prlimit64, back, RLIMIT_FSIZE, &old, NULL);
  }
  int fds[2];
  if (pipe(fds) == 0) {
    rc = fcntl(fds[0], F_SETSIG, SIGSTOP);
    if (rc == -1 && errno == EPERM) {
      printf("refused: fcntl F_SETSIG SIGSTOP\n");
    } else {
      printf("REACHED: fcntl F_SETSIG SIGSTOP\n");
      ++failures;
    }
    close(fds[0]);
    close(fds[1]);
  }
  fflush(stdout);
}

/* A child outside the group sends SIGSTOP to it: guard is in it, and so is
 * this process. */
static void TryGroup(void) {
  pid_t self = getpid(), group = getpgrp();
  int pipefd[2];
  if (pipe(pipefd) != 0) return;
  pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    setpgid(0, 0);
    long rc = kill(-group, SIGSTOP);
    int err = errno;
    char self_state = 0;
    for (int i = 0; i < 200 && self_state != 'T' && self_state != 't'; ++i) {
      Sleep(10);
      self_state = StateOf(self, NULL);
    }
    Sleep(50);
    char s = StateOf(back, NULL);
    char line[160];
    int n = snprintf(line, sizeof line, "group: kill rc %ld%s%s; this process %s; %s\n", rc, rc != 0 ? " " : "",
                     rc != 0 ? strerror(err) : "", self_state == 'T' || self_state == 't' ? "stopped" : "RAN ON",
                     s == 'T' || s == 't' ? "GUARD STOPPED" : "guard ran on");
    if (write(pipefd[1], line, (size_t)n) < 0) _exit(1);
    if (s == 'T' || s == 't') {
      kill(back, SIGCONT);
      if (front > 0) kill(front, SIGCONT);
    }
    kill(self, SIGCONT);
    _exit(0);
  }
  close(pipefd[1]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  char line[160];
  ssize_t n = read(pipefd[0], line, sizeof line - 1);
  close(pipefd[0]);
  if (n > 0) {
    line[n] = '\0';
    fputs(line, stdout);
    if (strstr(line, "GUARD STOPPED") != NULL || strstr(line, "RAN ON") != NULL) ++failures;
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stop_supervisor VICTIM\n");
    return 2;
  }
  /* Signals guard relays to the command when sent to it alone. */
  signal(SIGUSR2, SIG_IGN);
  back = getppid();
  if (!NamedGuard(back)) {
    printf("the parent %d is not named guard\n", (int)back);
    return 1;
  }
  pid_t up = 0;
  StateOf(back, &up);
  front = NamedGuard(up) ? up : 0;
  printf("supervisor %d, front %d\n", (int)back, (int)front);
  fflush(stdout);
  TryDirect(SIGSTOP);
  TryCatchable(SIGVTALRM);
  TryCatchable(SIGPROF);
  TryCatchable(SIGUSR2);
  TryCatchable(SIGSEGV);
  TryCatchable(SIGRTMIN + 3);
  TryLimit();
  TryGroup();
  TryDirect(SIGKILL);
  if (unlink(argv[1]) != 0) printf("unlink: %s\n", strerror(errno));
  printf("done, %d failure(s)\n", failures);
  return 0;
}
