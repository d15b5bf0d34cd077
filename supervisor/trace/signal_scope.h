// Under --mode preload no tracer refuses a signal aimed at guard
// (docs/security.md, "guard out of the session's reach"). Where the kernel
// has Landlock scopes (ABI 6, Linux 6.12), the command runs in a Landlock
// domain scoped for signals: the kernel refuses kill(2), tkill, tgkill,
// rt_sigqueueinfo, pidfd_send_signal and F_SETOWN's I/O signals from any
// process of the session to a process outside it (EPERM), guard included;
// a signal to a process group reaches only its members inside the session.
// The session's processes can no longer signal the user's other processes
// either (a server started before the session). The domain makes no
// filesystem rule, which would forbid mount(2) to the session.
#pragma once

namespace guard {

// In the forked child, before exec (async-signal-safe). Needs
// no_new_privs or CAP_SYS_ADMIN in the caller's user namespace (the child
// has it in the namespace it made). 0: scoped. An errno: not (EOPNOTSUPP:
// no Landlock scopes here).
int EnterSignalScope();

// Whether this kernel has Landlock scopes (nothing is entered).
bool SignalScopeAvailable();

}  // namespace guard
