// A guard session run one step at a time, with a snapshot of the tree
// between steps. A bash driver runs under guard and executes the steps in
// order, each in a subshell of its own; before step k (and once more after
// the last) it
//
//   1. creates the directory outside/markers/step-k: outside the root, so
//      guard records it by name only, with a sequence number that tells the
//      journal's operations before step k from those after;
//   2. writes "k STATUS" to the FIFO outside/stepped/ready (STATUS: how
//      step k-1 exited) and blocks reading "next" from outside/stepped/go.
//
// Meanwhile the test takes the snapshot of the tree and answers "next". So
// all steps are one session, and every snapshot is exact: nothing runs while
// it is taken. The FIFOs are opened read-write by the test, so neither side
// ever blocks in open(2), and a driver that dies is noticed within a second.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

struct SteppedSession {
  GuardResult guard;       // the run of guard itself (driver output included)
  std::string session_id;  // empty if guard made none
  // snapshots[k]: the tree just before step k; snapshots[n]: after the last.
  std::vector<TreeSnapshot> snapshots;
  // step_status[k]: the exit status of step k's subshell.
  std::vector<int> step_status;
  // marker_seq[k]: seq of the marker operation recorded before step k
  // (k = n: after the last step).
  std::vector<uint64_t> marker_seq;
  // first_seq[k]: seq of the first operation recorded after marker k, i.e.
  // the first operation of step k (that of marker k+1 if step k recorded
  // none); 0 when there is none.
  std::vector<uint64_t> first_seq;
  std::string error;  // why the run did not complete, "" if it did

  bool ok() const { return error.empty(); }
  // The first step that did not exit 0, or -1.
  int FailedStep() const;
};

// Runs `steps` (bash scripts, run with `set -e` in the root) under guard in
// `ws` as one session. Each sync point waits at most `step_timeout_seconds`.
SteppedSession RunSteppedSession(const Workspace& ws, const std::vector<std::string>& steps,
                                 int step_timeout_seconds = 60);

}  // namespace guard::e2e
