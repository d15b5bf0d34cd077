// A test-only fault injection point: a SIGKILL inside one chosen call, at a
// moment a test could otherwise hit only by chance (the end-to-end test
// tests/e2e/durability_kill_inside_call_test.cc). It only ever kills, guard
// or the calling process, exactly as `kill -9` from outside would at that
// instant; it changes nothing that guard records or lets through.
//
// GUARD_TEST_KILL_INSIDE_CALL=WHO:WHEN:N:PATH, read once, at the first call
// the tracer lets run:
//   WHO   guard (the supervisor kills itself) or agent (it kills the process
//         that made the call);
//   WHEN  before: after capture recorded the call and before it runs;
//         after: once it ran, before guard reads its result or learns its
//         outcome: at its syscall-exit stop, or for a call let run without
//         one, at the thread's next stop or its exit;
//   N     the N-th such call (from 1) naming PATH,
//   PATH  as the tracer resolved it (absolute): either path of the call.
// Unset (the only case outside tests): both hooks return at once.
#pragma once

#include <sys/types.h>

#include "supervisor/capture/mutation.h"

namespace guard {

// The tracer lets `m` run and will watch its exit.
void TestKillPointCallLetRun(const Mutation& m);
// `tid` is past the call it was let run (at its exit stop, or later).
// True when it killed someone: the caller must not learn the call's outcome.
bool TestKillPointCallReturned(pid_t tid);

}  // namespace guard
