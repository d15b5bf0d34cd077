// SignalRelay: makes guard transparent to signals. Installed after the
// command is spawned (so the command inherits default dispositions).
//
// - Signals a terminal sends to the foreground process group (Ctrl-C, Ctrl-\,
//   window size, hangup) already reach the command, which is in guard's group:
//   guard ignores them rather than dying or delivering them twice.
// - The same signals sent to guard alone by another process (kill PID) are
//   passed on to the command.
// - Terminal stop signals are ignored by guard itself; when the command
//   stops, guard stops too (front_process.h; StopLike() when guard runs as
//   one process), so the shell sees the job stop.
// - Every other signal whose default action would end guard (SIGVTALRM,
//   SIGIO, SIGUSR-like real-time signals, a SIGSEGV sent by kill...) is
//   shrugged off when another process sends it (ShrugSignalsFromOthers): a
//   process of the session, which shares guard's process group, must not
//   end guard with `kill -PROF 0`. SIGKILL and SIGSTOP, which no handler
//   can take, the tracer refuses at the call (signal_call.h).
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace guard {

// `tracer_tid`: the thread tracing the command, when it is not the caller
// (the front process relays for the back's tracer: front_process.h).
void InstallSignalRelay(pid_t command_pid, pid_t tracer_tid = 0);
// Installs a handler that ignores a signal sent by another process for
// every signal still at its default action that would end or dump guard.
// A fault of guard's own, and what guard sends itself (abort, raise, and
// SIGXFSZ, which the kernel sends as from the writer), keep their default
// action; any other signal the kernel sends (an I/O signal of an fd whose
// owner another process made guard, SIGXCPU) is ignored too. Handlers, unlike SIG_IGN, are not inherited across
// exec: the command and guard's helpers start with the defaults.
void ShrugSignalsFromOthers();

// Stops guard with `sig` (SIGTSTP, SIGTTIN, SIGTTOU or SIGSTOP); returns once
// guard is continued, after sending SIGCONT to the command.
void StopLike(int sig);

// How many signals have been passed on to the command so far (read by the
// front after it was woken while stopped: a signal sent to guard alone must
// also wake the command, or it would wait for the command's continue).
unsigned RelayedCount();
// The signals InstallSignalRelay passes on.
sigset_t RelayedSignals();
// Sends SIGCONT to the command.
void ContinueCommand();

}  // namespace guard
