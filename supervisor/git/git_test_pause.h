// A test-only pause point in guard's git writers: `guard commit` and the
// checkpoints stop at a named step, so that a test can SIGKILL them there
// or change the repository beside them (tests/e2e/git_commit_safety_test.cc,
// tests/e2e/git_checkpoint_failure_test.cc). It changes nothing the
// writers do.
//
// GUARD_TEST_PAUSE_GIT=STEP:PATH, read at each step: at every step named
// STEP the writer creates PATH and waits until the test removes it (at most
// 60 s), then goes on. Steps:
//   commit-intent   the commit's intent is recorded, index.lock not taken
//   commit-locked   index.lock holds the new index, the branch not moved
//   commit-ref      the branch moved, index.lock not yet renamed onto the index
//   commit-done     the index renamed into place, the intent not yet removed
//   pack-rename     a pack and its index are written under temporary names,
//                   not yet renamed into objects/pack
//   checkpoint-ref  a checkpoint's pack is in objects/pack (kept), its ref
//                   not yet written
// Unset (the only case outside tests): returns at once.
#pragma once

namespace guard {

void GitTestPause(const char* step);

}  // namespace guard
