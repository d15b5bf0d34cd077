// A guard session killed with SIGKILL while its agent sits idle after its
// work, for the tests of the session's work saved as it happens
// (docs/durability.md): start `guard -- bash -c SCRIPT`, wait until the
// test's condition holds, kill guard, wait until no process of the session
// runs, and keep the tree as the kill left it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

struct KilledSession {
  std::string id;
  TreeSnapshot at_kill;  // the tree once everything had stopped, .git left out
  pid_t supervisor_pid = 0;
  long supervisor_peak_kib = -1;  // VmHWM of guard's supervisor just before the kill
};

struct KillWhen {
  std::string script;  // run as bash -c SCRIPT in the tree
  std::map<std::string, std::optional<std::string>> env;
  // The moment: once `ready` holds (polled every 10 ms, 120 s at most: a
  // hang guard), and then `ready_for_kill` too (the same), and then
  // `settle_seconds` more.
  std::function<bool()> ready;
  std::function<bool(const std::string& session_id)> ready_for_kill;
  double settle_seconds = 0;
};

// Throws std::runtime_error when the session does not start or guard
// survives. `session_id` of ready_for_kill is the running session's.
KilledSession RunAndKillGuard(const Workspace& ws, const KillWhen& when);

// Once guard of session `id` was killed: waits until its supervisor is
// gone (it may still be exiting when the command's processes are already
// gone, and recovery leaves a session whose supervisor lives alone), then
// until no keeper holds the
// session's heartbeat (in watch mode the keeper holds it until it has
// stopped the session's processes and stamped it, session_keeper.h) and
// the coarse clock the kernel stamps ctimes with has passed its mtime, so
// that what a test changes from then on is later than the session by the
// clock recovery's catch-up reads (watch_catch_up.h). Throws after 30 s.
void WaitPastKeeperStamp(const Workspace& ws, const std::string& id);

// Whether the journal of running session `id` holds, for every path in
// `paths`, a post-image equal to what the tree holds now (type, mode,
// symlink target, content).
bool PostImagesMatchTree(const Workspace& ws, const std::string& id, const std::vector<std::string>& paths);
// The number of post-images of `path` in session `id`'s journal.
size_t PostImageCount(const Workspace& ws, const std::string& id, const std::string& path);

// bash -ec SCRIPT in the tree, outside guard, with git configured for tests
// (no user or system configuration). Throws on failure.
void RunInTree(const Workspace& ws, const std::string& script);
std::map<std::string, std::optional<std::string>> GitTestEnv(const Workspace& ws);

}  // namespace guard::e2e
