// A checkpoint beside `git gc --prune=now`: the gc removes the temporary
// pack a checkpoint is about to rename (made deterministic by the test
// pause point between writing a pack and its rename,
// supervisor/git/git_test_pause.h). The checkpoint is tried once more; when
// that fails too it is noted in the session, in its guard.log (also under
// -q) and by `guard status`, and the next checkpoint that succeeds clears
// the note.
#define BOOST_TEST_MODULE git_checkpoint_failure
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// A quiet session in a repository whose end checkpoint pauses before each
// pack's rename; at the first `gc_runs` pauses the test runs
// `git gc --prune=now`, which takes the temporary pack away.
std::string SessionWithGcBesideItsCheckpoint(const Workspace& ws, int gc_runs) {
  ws.Write("README", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  const std::string pause = ws.dir() + "/pause";
  GuardRun run;
  run.command = {"bash", "-c", "echo two > README"};
  run.env = GitTestEnv(ws);
  run.env["GUARD_TEST_PAUSE_GIT"] = "pack-rename:" + pause;
  ChildProcess session(GuardSpec(ws, run));
  for (int attempt = 0; attempt < 2; ++attempt) {
    BOOST_REQUIRE_MESSAGE(WaitForFile(pause), "attempt " << attempt + 1 << " never reached the pack's rename");
    if (attempt < gc_runs) {
      ProcessResult gc = Git(ws, {"gc", "-q", "--prune=now"});
      BOOST_REQUIRE_MESSAGE(gc.exit_code == 0, DescribeResult(gc));
    }
    unlink(pause.c_str());
  }
  ProcessResult r = session.Wait();
  BOOST_REQUIRE(WaitForDeferredSeals(ws));  // the checkpoint is the seal's, after guard exits
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err == "", "-q: nothing on the terminal: " << r.err);
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  return ids[0];
}

// The end checkpoint is written after guard has returned (the deferred
// seal): a `git gc --prune=now` the user runs at once may come between its
// pack and its ref. The pack is kept until the ref names it.
BOOST_AUTO_TEST_CASE(AGcBetweenTheCheckpointsPackAndItsRefLosesNoObject) {
  Workspace ws;
  ws.Write("README", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  const std::string pause = ws.dir() + "/pause";
  GuardRun run;
  run.command = {"bash", "-c", "echo two > README && echo new > added"};
  run.env = GitTestEnv(ws);
  run.env["GUARD_TEST_PAUSE_GIT"] = "checkpoint-ref:" + pause;
  ChildProcess session(GuardSpec(ws, run));
  BOOST_REQUIRE_MESSAGE(WaitForFile(pause), "the checkpoint never reached its ref");
  ProcessResult gc = Git(ws, {"gc", "-q", "--prune=now"});
  BOOST_REQUIRE_MESSAGE(gc.exit_code == 0, DescribeResult(gc));
  unlink(pause.c_str());
  ProcessResult r = session.Wait();
  BOOST_REQUIRE(WaitForDeferredSeals(ws));
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE_EQUAL(ids.size(), 1u);
  BOOST_TEST(GitOut(ws, {"show", "refs/guard/" + ids[0] + ":README"}) == "two\n");
  BOOST_TEST(GitOut(ws, {"show", "refs/guard/" + ids[0] + ":added"}) == "new\n");
  CheckFsck(ws);
  // Once the ref is written the pack is git gc's again: no .keep stays.
  ProcessResult keeps = RunProcess(ProcessSpec{.argv = {"bash", "-c", "ls .git/objects/pack | grep -c 'keep$' || true"},
                                               .cwd = ws.tree()});
  BOOST_TEST(keeps.out == "0\n", keeps.out);
}

BOOST_AUTO_TEST_CASE(ACheckpointThatFailsOnceIsTriedAgainAndWritten) {
  Workspace ws;
  std::string id = SessionWithGcBesideItsCheckpoint(ws, 1);
  BOOST_TEST(GitOut(ws, {"show", "refs/guard/" + id + ":README"}) == "two\n");
  GuardResult status = RunGuardCommand(ws, {"status"});
  BOOST_TEST(status.out.find("checkpoint failed") == std::string::npos, status.out);
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ACheckpointThatFailsTwiceIsNotedLoggedAndShownByStatus) {
  Workspace ws;
  std::string id = SessionWithGcBesideItsCheckpoint(ws, 2);
  BOOST_TEST(Git(ws, {"rev-parse", "--verify", "-q", "refs/guard/" + id}).exit_code != 0);
  std::string log = ReadFile(ws.home() + "/sessions/" + id + "/guard.log");
  BOOST_TEST(log.find("end checkpoint failed twice") != std::string::npos, log);
  BOOST_TEST(log.find("No such file or directory") != std::string::npos, log);
  GuardResult status = RunGuardCommand(ws, {"status"});
  BOOST_TEST(status.out.find("checkpoint failed: " + id) != std::string::npos, status.out);
  GuardResult json = RunGuardCommand(ws, {"status", "--json"});
  BOOST_TEST(json.out.find("\"checkpoint_failed\"") != std::string::npos, json.out);
  BOOST_TEST(json.out.find(id) != std::string::npos, json.out);

  // The checkpoint it names as the remedy writes it and clears the note.
  GuardResult again = RunGuardCommand(ws, {"checkpoint", "--session", id});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(GitOut(ws, {"show", "refs/guard/" + id + ":README"}) == "two\n");
  GuardResult after = RunGuardCommand(ws, {"status"});
  BOOST_TEST(after.out.find("checkpoint failed") == std::string::npos, after.out);
  CheckFsck(ws);
}

}  // namespace
}  // namespace guard::e2e
