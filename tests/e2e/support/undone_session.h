// One guard session of a command on a workspace's tree, with the snapshots
// of the tree around it, and the check that undo and replay give those
// trees back byte for byte (content, type, mode & 07777, symlink targets).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

class UndoneSession {
 public:
  // Runs `command` under guard in the tree; requires guard to exit with
  // `exit_code` (the command's: 128+N for a death by signal N) and to
  // record one session.
  UndoneSession(const Workspace& ws, std::vector<std::string> command, int exit_code = 0);

  const std::string& id() const { return id_; }
  const TreeSnapshot& before() const { return before_; }
  const TreeSnapshot& after() const { return after_; }
  const GuardResult& run() const { return run_; }
  SessionView View() const { return SessionView::Load(ws_.home(), id_); }

  // Runs `guard ARGS...` (exit 0 expected) and checks the tree is `expected`.
  void Expect(const std::vector<std::string>& args, const TreeSnapshot& expected) const;
  // undo -> before, replay -> after, undo -> before.
  void ExpectUndoReplayUndo() const;

 private:
  const Workspace& ws_;
  TreeSnapshot before_, after_;
  GuardResult run_;
  std::string id_;
};

namespace detail {
// Base-from-member: the workspace is made and prepared before the session
// that runs on it.
struct PreparedWorkspace {
  explicit PreparedWorkspace(const std::function<void(const Workspace&)>& setup) { setup(ws); }
  Workspace ws;
};
}  // namespace detail

// A fresh workspace prepared by `setup`, then one UndoneSession of the bash
// `script` on it (which must exit 0): the small hand-written undo cases.
class UndoneScript : public detail::PreparedWorkspace, public UndoneSession {
 public:
  UndoneScript(const std::function<void(const Workspace&)>& setup, const std::string& script)
      : PreparedWorkspace(setup), UndoneSession(ws, {"bash", "-c", script}) {}
};

}  // namespace guard::e2e
