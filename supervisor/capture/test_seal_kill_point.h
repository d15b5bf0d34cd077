// A test-only fault injection point: a SIGKILL of the supervisor inside the
// seal's placement of pending blobs (docs/format.md (Part II),
// "Resolution"), after their kBlobResolved records are durable and before
// or while their pending names are renamed into objects: a moment a test
// could otherwise hit only by chance (tests/e2e/durability_seal_kill_test.cc).
// It only ever kills, exactly as `kill -9` from outside would at that
// instant; it changes nothing that guard records.
//
// GUARD_TEST_KILL_IN_SEAL=N, read once: the supervisor kills itself once N
// pending blobs of a session's own seal are placed (0: right after the
// records are durable, before any). Never in a recovery's seal, so that the
// recovery the test runs next completes. Unset (the only case outside
// tests): returns at once.
#pragma once

#include <cstddef>

#include "common/session_meta.h"

namespace guard {

// `placed` pending blobs of the seal of a session ending in `state` are placed.
void TestKillInSeal(SessionState state, size_t placed);

}  // namespace guard
