// `guard commit` never leaves the branch and the index disagreeing: it
// refuses up front what would stop it writing the index (an index.lock, a
// split index), a kill at any step is finished or rolled back by the next
// `guard commit`, and it commits what `git add` of the session's paths
// would (ignored untracked files and paths inside a submodule left out and
// named). Every test ends with `git fsck --full --strict`. Unit twin of
// the repair's decisions: none; the kill series is its test
// (supervisor/git/commit_intent.h).
#define BOOST_TEST_MODULE git_commit_safety
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// A repository with one commit and an ignore pattern; a session changes a
// tracked file, creates an untracked one and an ignored one.
std::string RepositoryWithASession(const Workspace& ws) {
  ws.Write("README", "one\n");
  ws.Write(".gitignore", ".env\nnode_modules/\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  GuardRun run;
  run.command = {"bash", "-ec", "echo two > README; echo new > new.txt; echo SECRET=1 > .env; "
                                "mkdir -p node_modules/x; echo m > node_modules/x/i.js"};
  run.env = GitTestEnv(ws);
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  return r.new_sessions[0];
}

GuardResult Commit(const Workspace& ws, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"commit", "--yes"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunGuardCommand(ws, args);
}

std::string Head(const Workspace& ws) { return TrimEnd(GitOut(ws, {"rev-parse", "HEAD"})); }

// The session's work is committed, and the branch and the index agree:
// nothing staged, nothing of the session's paths modified.
void CheckCommitted(const Workspace& ws, const std::string& before) {
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", "HEAD^"})) == before);
  BOOST_TEST(GitOut(ws, {"show", "HEAD:README"}) == "two\n");
  BOOST_TEST(GitOut(ws, {"show", "HEAD:new.txt"}) == "new\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain", "--untracked-files=all"}) == "");
  BOOST_TEST(!ws.Exists(".git/index.lock"));
}

// Nothing committed, and the branch and the index agree with it: the
// session's work shows as unstaged changes only.
void CheckNotCommitted(const Workspace& ws, const std::string& before) {
  BOOST_TEST(Head(ws) == before);
  BOOST_TEST(GitOut(ws, {"status", "--porcelain", "--untracked-files=all"}) == " M README\n?? new.txt\n");
}

BOOST_AUTO_TEST_CASE(CommitWithAnIndexLockPresentIsRefusedWithNothingMoved) {
  Workspace ws;
  RepositoryWithASession(ws);
  std::string before = Head(ws);
  std::string index = ws.Read(".git/index");
  ws.Write(".git/index.lock", "");
  GuardResult r = Commit(ws);
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.err.find("index.lock exists") != std::string::npos, r.err);
  BOOST_TEST(Head(ws) == before);
  BOOST_TEST(ws.Read(".git/index") == index);
  unlink((ws.tree() + "/.git/index.lock").c_str());
  CheckNotCommitted(ws, before);
  // Once the lock is gone the same command commits, and git agrees.
  GuardResult again = Commit(ws);
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  CheckCommitted(ws, before);
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(CommitOverASplitIndexIsRefusedUpFrontWithTheRemedy) {
  Workspace ws;
  RepositoryWithASession(ws);
  RunInTree(ws, "git update-index --split-index");
  std::string before = Head(ws);
  GuardResult r = Commit(ws);
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.err.find("git update-index --no-split-index") != std::string::npos, r.err);
  BOOST_TEST(Head(ws) == before);
  CheckNotCommitted(ws, before);
  RunInTree(ws, "git update-index --no-split-index");
  GuardResult again = Commit(ws);
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  CheckCommitted(ws, before);
  CheckFsck(ws);
}

// SIGKILL at each step of a commit (supervisor/git/git_test_pause.h), then
// `guard commit` again: the commit is there once, whole, and git agrees.
BOOST_AUTO_TEST_CASE(CommitKilledAtAnyStepIsFinishedOrRolledBackByTheNext) {
  for (const char* step : {"commit-intent", "commit-locked", "commit-ref", "commit-done"}) {
    BOOST_TEST_CONTEXT("killed at " << step) {
      Workspace ws;
      RepositoryWithASession(ws);
      std::string before = Head(ws);
      const std::string pause = ws.dir() + "/pause";
      ProcessSpec spec;
      spec.argv = {GuardBinary(), "commit", "--yes"};
      spec.cwd = ws.tree();
      spec.env = GuardEnv(ws);
      spec.env["GUARD_TEST_PAUSE_GIT"] = std::string(step) + ":" + pause;
      ChildProcess committing(spec);
      BOOST_REQUIRE_MESSAGE(WaitForFile(pause), "guard commit never reached " << step);
      kill(committing.pid(), SIGKILL);
      ProcessResult killed = committing.Wait();
      BOOST_TEST(killed.exit_code == 128 + SIGKILL);
      unlink(pause.c_str());
      // Right after the kill the branch may have moved and the index not:
      // the next guard commit mends that before anything else.
      GuardResult again = Commit(ws);
      BOOST_TEST(again.exit_code == 0, DescribeResult(again));
      CheckCommitted(ws, before);
      BOOST_TEST(TrimEnd(GitOut(ws, {"rev-list", "--count", "HEAD"})) == "2");
      for (const auto& e : std::filesystem::directory_iterator(ws.tree() + "/.git")) {
        std::string name = e.path().filename();
        BOOST_TEST(name.rfind("guard-index-", 0) != 0, "left behind: .git/" << name);
      }
      CheckFsck(ws);
    }
  }
}

BOOST_AUTO_TEST_CASE(CommitLeavesOutIgnoredFilesAndNamesThemUnlessAskedFor) {
  Workspace ws;
  RepositoryWithASession(ws);
  GuardResult r = Commit(ws);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(GitOut(ws, {"diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"}) == "M\tREADME\nA\tnew.txt\n");
  BOOST_TEST(r.err.find("left out 2 ignored") != std::string::npos, r.err);
  BOOST_TEST(r.err.find(".env") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("node_modules/x/i.js") != std::string::npos, r.err);
  CheckFsck(ws);

  Workspace asked;
  RepositoryWithASession(asked);
  GuardResult all = Commit(asked, {"--include-ignored"});
  BOOST_TEST(all.exit_code == 0, DescribeResult(all));
  BOOST_TEST(GitOut(asked, {"diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"}) ==
             "A\t.env\nM\tREADME\nA\tnew.txt\nA\tnode_modules/x/i.js\n");
  BOOST_TEST(GitOut(asked, {"status", "--porcelain", "--untracked-files=all"}) == "");
  CheckFsck(asked);
}

// A tracked ignored file is committed, as `git add` of it would.
BOOST_AUTO_TEST_CASE(CommitKeepsATrackedFileThatMatchesAnIgnorePattern) {
  Workspace ws;
  ws.Write(".gitignore", "*.log\n");
  ws.Write("kept.log", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git add -f kept.log && git commit -qm one");
  GuardResult s = RunGuardBash(ws, "echo two > kept.log");
  BOOST_REQUIRE(s.new_sessions.size() == 1);
  GuardResult r = Commit(ws);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(GitOut(ws, {"show", "HEAD:kept.log"}) == "two\n");
  CheckFsck(ws);
}

// A session that edits files inside a submodule: the checkpoint and the
// commit are written, the submodule's files stay its own, and both say so.
BOOST_AUTO_TEST_CASE(CheckpointAndCommitLeaveASubmodulesFilesToTheSubmodule) {
  Workspace ws;
  const std::string sub_src = ws.outside() + "/subsrc";
  ProcessSpec init;
  init.argv = {"bash", "-ec", "mkdir -p '" + sub_src + "' && cd '" + sub_src +
                                  "' && git init -q -b main . && echo s > s.txt && git add -A && git commit -qm s"};
  init.env = GitTestEnv(ws);
  BOOST_REQUIRE(RunProcess(init).exit_code == 0);
  ws.Write("README", "one\n");
  RunInTree(ws, "git init -q -b main . && git -c protocol.file.allow=always submodule add -q '" + sub_src +
                    "' sub && git add -A && git commit -qm one");
  std::string before = Head(ws);
  std::string gitlink = TrimEnd(GitOut(ws, {"rev-parse", "HEAD:sub"}));
  GuardRun run;
  run.command = {"bash", "-ec", "echo two > README; echo changed > sub/s.txt; echo n > sub/new.txt"};
  run.env = GitTestEnv(ws);
  GuardResult session = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(session.exit_code == 0 && session.new_sessions.size() == 1, DescribeResult(session));
  const std::string ref = "refs/guard/" + session.new_sessions[0];
  BOOST_TEST(GitOut(ws, {"show", ref + ":README"}) == "two\n");
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", ref + ":sub"})) == gitlink);

  GuardResult r = Commit(ws);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find("left out 2 path(s) inside submodules") != std::string::npos, r.err);
  BOOST_TEST(GitOut(ws, {"diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"}) == "M\tREADME\n");
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", "HEAD:sub"})) == gitlink);
  // The submodule's own changes are still there, for its own history.
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}, ws.tree() + "/sub") == " M s.txt\n?? new.txt\n");
  CheckFsck(ws);

  // Once the submodule commits, a session there records its new HEAD as
  // `git commit -a` would.
  GuardRun commit_in_sub;
  commit_in_sub.command = {"bash", "-ec", "cd sub && echo w > w.txt && git add -A && git commit -qm sub-work"};
  commit_in_sub.env = GitTestEnv(ws);
  GuardResult moved = RunGuard(ws, commit_in_sub);
  BOOST_REQUIRE_MESSAGE(moved.exit_code == 0 && moved.new_sessions.size() == 1, DescribeResult(moved));
  std::string sub_head = TrimEnd(GitOut(ws, {"rev-parse", "HEAD"}, ws.tree() + "/sub"));
  BOOST_TEST(TrimEnd(GitOut(ws, {"rev-parse", "refs/guard/" + moved.new_sessions[0] + ":sub"})) == sub_head);
  CheckFsck(ws);
}

}  // namespace
}  // namespace guard::e2e
