// A test-only fault injection point: `guard undo` or `guard replay`, which
// record their own session without a tracer (restore_session.h), SIGKILL
// themselves at a chosen change, exactly as `kill -9` from outside would at
// that instant (tests/e2e/restore_kill_test.cc). It changes nothing the
// restore records or does.
//
// GUARD_TEST_KILL_RESTORE=WHEN:N, read once:
//   WHEN  before: once the change's records are appended, before it is made;
//         after: once it is made, before its outcome is recorded;
//   N     the N-th change of the restore (from 1), counted over every change
//         it tells its session of.
// Unset (the only case outside tests): both hooks return at once.
#pragma once

namespace guard {

// The restore recorded its next change and is about to make it.
void RestoreKillPointBefore();
// The restore made that change and is about to record its outcome.
void RestoreKillPointAfter();

}  // namespace guard

namespace guard {

// GUARD_TEST_PAUSE_RESTORE=PATH (tests only): `guard undo` and `guard
// replay`, with the store pinned and the plan made, create PATH and wait
// until the test removes it (at most 60 s) before they change anything: a
// test runs a gc or a forget in that window (tests/e2e/gc_beside_restore_test.cc).
// With GUARD_TEST_PAUSE_RESTORE_AT=N as well, the pause is at the N-th
// change instead (once its records are appended, before it is made: as
// GUARD_TEST_KILL_RESTORE=before:N), and it also ends when the restore
// catches an interrupting signal (restore_interrupt.h): a test interrupts
// or kills the restore there (tests/e2e/restore_finish_test.cc).
// Unset: returns at once.
void RestoreTestPause();

}  // namespace guard
