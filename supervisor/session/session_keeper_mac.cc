// The keeper's macOS part (session_keeper.h), compiled by the macOS build
// only, never run here: the session's processes are the command's process
// group (the launch puts the command in a group of its own); a process that
// leaves it by setsid or setpgid escapes. macOS has no user namespaces and
// no clone: the keeper is forked twice, so that it is no child of guard's
// and guard's wait for the session's processes does not wait for it
// (launchd reaps it). It sees guard's end as the end of its pipe, as on
// Linux, or through a kqueue's EVFILT_PROC NOTE_EXIT on guard, whichever
// comes first (WatchGuardExit).
#include <signal.h>
#include <sys/event.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/session/session_keeper.h"

namespace guard::keeper_platform {

bool ReadMark(pid_t pid, Mark* mark) {
  mark->valid = true;
  mark->first = pid;
  pid_t pgid = getpgid(pid);
  // guard's own group would be the shell's job: never killed whole.
  if (pgid < 0 || pgid == getpgrp()) return false;
  mark->pgid = pgid;
  return true;
}

int KillMarked(const Mark& mark, int passes) {
  int kills = 0;
  if (mark.first > 0 && kill(mark.first, SIGKILL) == 0) ++kills;
  if (mark.pgid <= 0) return kills;
  for (int pass = 0; pass < passes; ++pass) {
    if (killpg(mark.pgid, SIGKILL) != 0) break;  // ESRCH: nobody is left in the group
    ++kills;
    timespec pause{0, 2 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  return kills;
}

void CloseAllBut(int keep) {
  const int top = static_cast<int>(sysconf(_SC_OPEN_MAX));
  for (int fd = 0; fd < top; ++fd) {
    if (fd != keep) close(fd);
  }
}

pid_t ForkQuiet() {
  pid_t middle = fork();
  if (middle != 0) {
    int status = 0;
    while (middle > 0 && waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    return middle;
  }
  if (fork() != 0) _exit(0);  // the keeper is the grandchild
  return 0;
}

bool ReapQuiet(pid_t, bool) { return true; }  // launchd reaps the keeper

int WatchGuardExit(pid_t guard, bool* gone) {
  *gone = false;
  const int kq = kqueue();
  if (kq < 0) return -1;  // the pipe alone, then
  struct kevent change;
  EV_SET(&change, guard, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  if (kevent(kq, &change, 1, nullptr, 0, nullptr) != 0) {
    *gone = errno == ESRCH;  // guard exited before the keeper looked
    close(kq);
    return -1;
  }
  return kq;  // a kqueue polls readable once an event is pending
}

}  // namespace guard::keeper_platform
