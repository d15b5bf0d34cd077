// SessionKeeper: when guard dies, the session's processes stop, also
// where no tracer holds them (--mode preload, watch mode). Under the tracer
// PTRACE_O_EXITKILL does it; without one, the command's first process dies
// with guard (PR_SET_PDEATHSIG) but what it started would run on,
// changing files nobody records.
//
// The keeper is a small process guard forks before the command starts. It
// holds the read end of a pipe whose write end guard alone holds; it reads
// what marks the session's processes, and when the pipe ends without
// guard's word that the session is over (guard was killed), it kills them
// all, again until none is left (a process may fork meanwhile), and exits.
//
// What marks them is the platform's (session_keeper_linux.cc,
// session_keeper_mac.cc):
//   Linux: the session's user namespace. The command runs in one of its
//          own (trace/state_isolation.h), which no process can leave, so
//          every process of the session, whatever its parent, session or
//          process group, is in it or in one nested in it. A command that
//          is not isolated (the kernel refuses user namespaces, or
//          hide_state = "off") has no such mark: the keeper then kills the
//          first process only, as PR_SET_PDEATHSIG already does.
//   macOS: the command's process group (what a process leaves by setsid
//          or setpgid escapes it).
// Why not a pid namespace whose init dies with guard: the shim names a
// process by what getpid returns and guard checks a ring producer's life
// by /proc/PID (docs/ring.md): in a pid namespace of its own the
// command's pids would not be guard's.
//
// Once none is left, the keeper sets the mtime of the session's heartbeat
// file (sessions/<id>/alive, work_saver.h) to now: no process of the
// session changed anything after it, so recovery tells the session's last
// changes from those made after it by that clock (recovery_end_state.h,
// watch_catch_up.h).
//
// The keeper is forked with no exit signal (a "clone" child): guard's
// wait for the session's processes (waitpid without __WALL) does not see
// it, and the destructor reaps it. It runs no code of
// guard's but its loop: every signal blocked, its own session (no
// terminal's signal reaches it), every other fd closed, system calls only
// (it was forked from a process with threads).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class SessionKeeper {
 public:
  // `alive_path`: the session's heartbeat file, stamped once the
  // session's processes are stopped ("": none).
  static Status Start(const std::string& alive_path, std::unique_ptr<SessionKeeper>* out);
  // Releases the keeper if that was not done, and reaps it (by now it has
  // long ended: the wait costs nothing).
  ~SessionKeeper();
  SessionKeeper(const SessionKeeper&) = delete;
  SessionKeeper& operator=(const SessionKeeper&) = delete;

  // The command started as `pid`; the keeper reads from it what marks the
  // session's processes. False when nothing does (Linux: the command is
  // in guard's own user namespace): then only `pid` is killed.
  bool Keep(pid_t pid);
  // The session is over: the keeper exits without killing anything. Not
  // waited for here (a keeper the scheduler is slow to run would delay the
  // seal): it is reaped now if it has ended, else by the destructor.
  // Idempotent.
  void Release();

  pid_t pid() const { return pid_; }

 private:
  SessionKeeper() = default;
  UniqueFd to_keeper_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Waits until no keeper holds the heartbeat file `alive_path` (a keeper
// holds it locked for its life: once guard died, until the session's
// processes are all stopped and the file stamped), `timeout_ms` at most.
// Recovery calls it before it looks at the tree.
void WaitForKeeper(const std::string& alive_path, int timeout_ms);

// The platform's part, called in the keeper process (system calls only).
namespace keeper_platform {

// What marks the session's processes, read from the command's `pid`.
struct Mark {
  bool valid = false;
  pid_t first = -1;  // the command's first process
  int ns_fd = -1;    // Linux: the session's user namespace, held open
  unsigned long ns_dev = 0, ns_ino = 0;
  pid_t pgid = -1;   // macOS: the command's process group
};

// Fills *mark from the command's `pid`: false when nothing marks its
// processes but their being the command (valid stays true for `first`).
bool ReadMark(pid_t pid, Mark* mark);
// Kills every process the mark names, until a pass finds none (at most
// `passes`). Returns how many kills were sent.
int KillMarked(const Mark& mark, int passes);
// Closes every fd but `keep`.
void CloseAllBut(int keep);
// An fd that polls readable once process `guard` has exited, or -1 where
// the pipe alone tells it (Linux). macOS: a kqueue with EVFILT_PROC
// NOTE_EXIT on guard, so that guard's end is seen even while a child of
// guard's that has not yet exec'd still holds the pipe's write end.
// *gone: guard had already exited.
int WatchGuardExit(pid_t guard, bool* gone);
// A raw fork with no exit signal: 0 in the child, the pid, or -1.
pid_t ForkQuiet();
// Reaps the child ForkQuiet made: true once it is reaped. `wait`: until
// it has ended; else only if it already has.
bool ReapQuiet(pid_t pid, bool wait);

}  // namespace keeper_platform

}  // namespace guard
