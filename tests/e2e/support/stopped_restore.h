// A restore stopped part-way, for the tests of what the same command typed
// again does (docs/restore.md, "An interrupted restore"): a session of a few
// hundred files whose undo and replay make every kind of change, and a run
// of `guard undo` or `guard replay` paused at its N-th change
// (GUARD_TEST_PAUSE_RESTORE_AT, supervisor/restore/restore_kill_point.h)
// and stopped there by a signal or a closed stdout.
#pragma once

#include <string>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

// A session that removes a directory of `files` files, rewrites others,
// makes a directory of new ones and replaces a directory by a file.
struct RestoredSession {
  Workspace ws;
  TreeSnapshot before, after;
  std::string id;

  explicit RestoredSession(int files = 300);
  GuardResult Guard(const std::vector<std::string>& args) const { return RunGuardCommand(ws, args); }
  std::string PauseFile() const { return ws.dir() + "/pause"; }
  // The changes a whole undo of the session makes (its session's
  // operations); the undo is replayed after, the tree as the session left
  // it, and the changes of that replay are `replay_changes`.
  size_t UndoChanges();
  size_t replay_changes = 0;
};

enum class RestoreStop { kSigint, kSigterm, kSigkill, kClosedStdout };

struct StoppedRestore {
  ProcessResult result;
  bool paused = false;                    // it reached change `at`
  std::vector<std::string> new_sessions;  // the restore's session
};

// Runs `guard ARGS` paused at change `at` (0: before its first change, its
// own session not yet started) and stops it there as `how` says
// (a closed stdout: its reader is gone from the start, and it goes on).
StoppedRestore RunStoppedRestore(const RestoredSession& s, const std::vector<std::string>& args, long at,
                                 RestoreStop how);

// "    expected/found lines" of the differences, "" when none.
std::string TreeDiff(const TreeSnapshot& expected, const TreeSnapshot& actual);

}  // namespace guard::e2e
