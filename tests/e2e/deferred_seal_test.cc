// The deferred seal (supervisor/session/deferred_seal.h): `guard -- CMD`
// exits with the command's status once the session's last records are
// written, and its own process seals the session after. Made deterministic
// by the test pause point GUARD_TEST_PAUSE_SEAL (the seal waits at a named
// step until the test removes a file): no sleeps, no timed assertions.
//   - guard has exited (its parent's wait returned) while the seal is
//     paused at its start, the session marked as being sealed;
//   - a command that needs the session (undo) started during the seal
//     waits for it, says so once the wait is long, and then restores;
//   - a SIGKILL of the sealer at its start: the next command recovers the
//     session, and undo gives back the tree byte for byte;
//   - a SIGKILL after meta.json, before the end checkpoint: the next
//     command finishes the seal, and the checkpoint is written;
//   - `sealed` is made only once the session ended and its seal is done,
//     never beside a seal under way.
// Unit twin: none; the lock and the mark are file-system state, checked
// here in place (a free lock with the mark means a dead sealer).
#define BOOST_TEST_MODULE deferred_seal
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/session_meta.h"
#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// The pid the paused seal wrote into `pause` (0 if it never paused).
pid_t PausedSealer(const std::string& pause) {
  if (!WaitForFile(pause)) return 0;
  return static_cast<pid_t>(std::strtol(ReadFile(pause).c_str(), nullptr, 10));
}

struct PausedSession {
  std::string id;
  pid_t sealer = 0;
  ProcessResult guard;
};

// `script` under guard, its seal paused at `step`; returns once guard has
// exited, with the seal still paused.
PausedSession RunPaused(const Workspace& ws, const std::string& script, const std::string& step,
                        const std::string& pause, bool git = false) {
  GuardRun run;
  run.command = {"bash", "-c", script};
  if (git) run.env = GitTestEnv(ws);
  run.env["GUARD_TEST_PAUSE_SEAL"] = step + ":" + pause;
  PausedSession p;
  p.guard = RunProcess(GuardSpec(ws, run));  // not RunGuard: it would wait for the seal
  p.sealer = PausedSealer(pause);
  std::vector<std::string> ids = ws.SessionIds();
  if (ids.size() == 1) p.id = ids[0];
  return p;
}

void KillSealer(pid_t sealer) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, sealer, 0));
  BOOST_REQUIRE(pidfd >= 0);
  BOOST_REQUIRE(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0);
  close(pidfd);
  int64_t waited = 0;
  while (!ProcessGone(sealer) && waited++ < 10000) usleep(1000);
  BOOST_REQUIRE(ProcessGone(sealer));
}

BOOST_AUTO_TEST_CASE(GuardExitsWithTheStatusBeforeTheSealAndUndoWaitsForIt) {
  Workspace ws;
  ws.Write("kept.txt", "before\n");
  ws.Write("gone.txt", "to delete\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string pause = ws.outside() + "/pause";
  PausedSession s = RunPaused(ws, "echo after > kept.txt; rm gone.txt; echo new > made.txt; exit 3", "start", pause);
  // The parent's wait returned with the command's status while the seal
  // has not even begun.
  BOOST_TEST(!s.guard.timed_out);
  BOOST_TEST(s.guard.exit_code == 3, DescribeResult(s.guard));
  BOOST_REQUIRE(s.sealer > 0);
  BOOST_REQUIRE(!s.id.empty());
  BOOST_TEST(!ProcessGone(s.sealer));
  const std::string dir = ws.home() + "/sessions/" + s.id;
  SessionMeta meta;
  BOOST_REQUIRE(LoadSessionMeta(dir + "/meta.json", &meta).ok());
  BOOST_TEST(SessionStateName(meta.state) == std::string("running"));
  BOOST_TEST(PathExists(dir + "/sealing"));

  // undo, started now, must wait: its stderr says so once the wait is long
  // (1 s), and only then does the seal go on.
  const std::string undo_err = ws.outside() + "/undo.err";
  ProcessSpec undo;
  undo.argv = {"bash", "-c", "exec \"$@\" 2>" + undo_err, "bash", GuardBinary(), "undo", "--yes", "--session", s.id};
  undo.cwd = ws.tree();
  undo.env = GuardEnv(ws);
  ChildProcess undo_proc(undo);
  int64_t polls = 0;
  while ((!PathExists(undo_err) || ReadFile(undo_err).find("waiting for session " + s.id) == std::string::npos) &&
         polls++ < 60000) {
    usleep(1000);
  }
  BOOST_REQUIRE_MESSAGE(ReadFile(undo_err).find("waiting for session " + s.id + " to be sealed") != std::string::npos,
                        ReadFile(undo_err));
  unlink(pause.c_str());
  ProcessResult undone = undo_proc.Wait();
  BOOST_TEST(undone.exit_code == 0, DescribeResult(undone) << ReadFile(undo_err));
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
  BOOST_TEST(SessionStateOf(ws, s.id) == "finished");
  BOOST_TEST(!PathExists(dir + "/sealing"));
}

BOOST_AUTO_TEST_CASE(ASealerKilledAtItsStartIsRecoveredByTheNextCommand) {
  Workspace ws;
  ws.Write("kept.txt", "before\n");
  ws.Write("gone.txt", "to delete\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string pause = ws.outside() + "/pause";
  PausedSession s = RunPaused(ws, "echo after > kept.txt; rm gone.txt; mkdir d; echo new > d/made.txt", "start", pause);
  BOOST_TEST(s.guard.exit_code == 0, DescribeResult(s.guard));
  BOOST_REQUIRE(s.sealer > 0);
  TreeSnapshot after = SnapshotTree(ws.tree());
  KillSealer(s.sealer);
  unlink(pause.c_str());
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", s.id});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(undo.err.find("recovered session " + s.id) != std::string::npos, undo.err);
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
  BOOST_TEST(SessionStateOf(ws, s.id) == "recovered");
  BOOST_TEST(!PathExists(ws.home() + "/sessions/" + s.id + "/sealing"));
  GuardResult replay = RunGuardCommand(ws, {"replay", "--yes", "--session", s.id});
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  BOOST_TEST(DiffSnapshots(after, SnapshotTree(ws.tree())).empty());
  // Recovered, so done for good: a later command marks it `sealed` and
  // passes it over from then on.
  BOOST_TEST(PathExists(ws.home() + "/sessions/" + s.id + "/sealed"));
}

// `sealed` (docs/format.md) is made only once meta.json says the session
// ended and no seal of it is under way: never while it runs or is being
// sealed, nor for a session whose guard was killed before its recovery.
BOOST_DATA_TEST_CASE(OnlyAnEndedAndSealedSessionIsMarkedSealed,
                     boost::unit_test::data::make(std::vector<std::string>{"start", "checkpoint"}), step) {
  // At "start" meta.json still says running; at "checkpoint" it says
  // finished, and the `sealing` mark is what tells the seal is under way.
  Workspace ws;
  const std::string pause = ws.outside() + "/pause";
  PausedSession s = RunPaused(ws, "echo x > a", step, pause);
  BOOST_REQUIRE(s.sealer > 0);
  const std::string dir = ws.home() + "/sessions/" + s.id;
  // A session beside the paused seal, in another root: it does not wait
  // for this seal, and its recovery looks at every session.
  const std::string elsewhere = ws.outside() + "/elsewhere";
  BOOST_REQUIRE(mkdir(elsewhere.c_str(), 0700) == 0);
  GuardRun beside;
  beside.command = {"true"};
  beside.cwd = elsewhere;
  ProcessSpec spec = GuardSpec(ws, beside);
  for (size_t i = 0; i + 1 < spec.argv.size(); ++i) {
    if (spec.argv[i] == "--root") spec.argv[i + 1] = elsewhere;
  }
  ProcessResult other = RunProcess(spec);
  BOOST_TEST(other.exit_code == 0, DescribeResult(other));
  BOOST_TEST(!PathExists(dir + "/sealed"), "marked while its seal was under way");
  unlink(pause.c_str());
  BOOST_REQUIRE(WaitForDeferredSeals(ws));
  BOOST_TEST(!PathExists(dir + "/sealed"));  // nothing has looked since
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(PathExists(dir + "/sealed"));
  BOOST_TEST(SessionStateOf(ws, s.id) == "finished");
}

BOOST_AUTO_TEST_CASE(ASealerKilledBeforeTheEndCheckpointLeavesItToTheNextCommand) {
  Workspace ws;
  ws.Write("README", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  const std::string pause = ws.outside() + "/pause";
  PausedSession s = RunPaused(ws, "echo two > README", "checkpoint", pause, /*git=*/true);
  BOOST_TEST(s.guard.exit_code == 0, DescribeResult(s.guard));
  BOOST_REQUIRE(s.sealer > 0);
  KillSealer(s.sealer);
  unlink(pause.c_str());
  BOOST_TEST(SessionStateOf(ws, s.id) == "finished");  // sealed; `guard sessions` also finished the seal
  BOOST_TEST(!PathExists(ws.home() + "/sessions/" + s.id + "/sealing"));
  BOOST_TEST(GitOut(ws, {"show", "refs/guard/" + s.id + ":README"}) == "two\n");
  CheckFsck(ws);
  // The command that finished the seal left the mark to the next one.
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_TEST(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(PathExists(ws.home() + "/sessions/" + s.id + "/sealed"));
}

}  // namespace
}  // namespace guard::e2e
