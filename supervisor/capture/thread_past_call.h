// Whether a traced thread that guard let into a system call has come out of
// it, from /proc alone (the tracer may not stop it again: a call let run
// without an exit stop, learned_outcome.h). Capture uses it to keep two
// threads' calls on one name in the order of their records
// (Capture::WaitForCallsOn).
#pragma once

#include <sys/types.h>

#include <chrono>

namespace guard {

// Waits until thread `tid` is past the system call it was let into: it is
// in a tracing stop (its exit stop, or the entry of its next call), it
// runs in user space, it is in another call than the one first seen, or it
// is gone. Returns false if `limit` passed first (a call that blocks: a
// read of a pipe that was the next call, a lock).
bool WaitUntilPastCall(pid_t tid, std::chrono::milliseconds limit);

}  // namespace guard
