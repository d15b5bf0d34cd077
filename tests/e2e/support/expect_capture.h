// The checks every capture test makes on the session its guard run
// recorded, as Boost.Test assertions (call them inside a test case).
#pragma once

#include <string>
#include <vector>

#include "tests/e2e/support/capture_check.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

// The one session `run` created (required), read back; its journal must
// read without damage.
SessionView OnlyNewSession(const Workspace& ws, const GuardResult& run);

// Asserts, for the one session `run` created:
//  (a) its successful operations are exactly `expected` (see MatchOps);
//  (b) every pre-image matches `before`, the snapshot of the tree taken just
//      before the run (see CheckPreImages);
//  (c) every final state matches the tree as it is now;
//  and that the session was sealed as finished with guard's exit code.
// Operations on `unlisted_dir` and below (e.g. ".git": a program's private
// state) are left out of (a) but still checked by (b) and (c).
// Returns the session for further checks.
SessionView ExpectCapture(const Workspace& ws, const GuardResult& run, const TreeSnapshot& before,
                          const std::vector<Op>& expected, bool ordered = true,
                          const std::string& unlisted_dir = "");

// Asserts that every path in `paths` had its pre-run content (or symlink
// target) found byte for byte in a pre-image of the session.
void ExpectPreImagesOf(const SessionView& session, const TreeSnapshot& before,
                       const std::vector<std::string>& paths);

}  // namespace guard::e2e
