// Undo and replay of a session that ran git put git's own state back the
// git way (docs/restore.md, "git's own files"): the work tree as any path,
// branches and HEAD by compare-and-swap, the index entries of the session's
// paths only (the user's own staging kept), no object removed; a ref moved
// since is a conflict for that ref alone, named with the git command that
// finishes it; hooks and config come back exactly. Every test ends with
// `git fsck --full --strict`. Unit twin of the path classes:
// unit/base/git_dir_path_test.cc.
#define BOOST_TEST_MODULE git_state_restore
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Rev(const Workspace& ws, const std::string& what) { return TrimEnd(GitOut(ws, {"rev-parse", what})); }

bool RefExists(const Workspace& ws, const std::string& ref) {
  return Git(ws, {"show-ref", "--verify", "--quiet", ref}).exit_code == 0;
}

// Every file under .git/objects.
std::set<std::string> Objects(const Workspace& ws) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(ws.Path(".git/objects"))) {
    if (e.is_regular_file()) out.insert(e.path().string());
  }
  return out;
}

GuardResult Guarded(const Workspace& ws, const std::string& script) {
  GuardRun run;
  run.command = {"bash", "-ec", script};
  run.env = GitTestEnv(ws);
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  return r;
}

// A repository on main with one commit (c1); a session that commits on
// main (c2), makes and checks out a branch, stages a new file and edits
// another without staging it.
struct GitSession {
  std::string c1, c2, session;
  std::string config;  // .git/config before the session
};

GitSession RunGitSession(const Workspace& ws, const std::string& extra = "") {
  ws.Write("README", "readme\n");
  ws.Write("a.txt", "one\n");
  ws.Write("other.txt", "other\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  GitSession g;
  g.c1 = Rev(ws, "HEAD");
  g.config = ws.Read(".git/config");
  GuardResult r = Guarded(ws, "echo two > a.txt; git add a.txt; git commit -qm two; git checkout -q -b feature; "
                              "echo new > new.txt; git add new.txt; echo edited > README" + extra);
  g.session = r.new_sessions[0];
  g.c2 = Rev(ws, "main");
  BOOST_REQUIRE(g.c2 != g.c1);
  return g;
}

// The user, after the session: `git status` (which may refresh the index)
// and `git add` of a path the session never touched.
void UserStagesOther(const Workspace& ws) {
  GitOut(ws, {"status", "--porcelain"});
  ws.Write("other.txt", "the user's\n");
  GitOut(ws, {"add", "other.txt"});
}

void CheckUndone(const Workspace& ws) {
  BOOST_TEST(ws.Read("a.txt") == "one\n");
  BOOST_TEST(ws.Read("README") == "readme\n");
  BOOST_TEST(!ws.Exists("new.txt"));
  BOOST_TEST(TrimEnd(GitOut(ws, {"symbolic-ref", "HEAD"})) == "refs/heads/main");
  BOOST_TEST(!RefExists(ws, "refs/heads/feature"));
  BOOST_TEST(!ws.Exists(".git/index.lock"));
}

BOOST_AUTO_TEST_CASE(UndoMovesTheBranchBackAndKeepsTheUsersStaging) {
  Workspace ws;
  GitSession g = RunGitSession(ws);
  std::set<std::string> objects = Objects(ws);
  UserStagesOther(ws);

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out.find(".git/objects") == std::string::npos, r.out);  // no object in the plan
  BOOST_TEST(r.err.find("conflict") == std::string::npos, r.err);
  CheckUndone(ws);
  BOOST_TEST(Rev(ws, "main") == g.c1);
  // The user's staging of other.txt is kept; nothing of the session's is staged.
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "M  other.txt\n");
  BOOST_TEST(GitOut(ws, {"show", ":other.txt"}) == "the user's\n");
  // No object removed; the move back is in main's reflog.
  std::set<std::string> now = Objects(ws);
  for (const std::string& o : objects) BOOST_TEST(now.count(o) == 1, o << " was removed");
  BOOST_TEST(GitOut(ws, {"reflog", "show", "-1", "--format=%gs", "refs/heads/main"}).find("guard undo: session") == 0);
  BOOST_TEST(ws.Read(".git/config") == g.config);
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ARefMovedSinceIsAConflictForThatRefAlone) {
  Workspace ws;
  GitSession g = RunGitSession(ws);
  UserStagesOther(ws);
  // The user moves main on (a commit made without touching the work tree).
  RunInTree(ws, "c=$(git commit-tree -p main -m mine 'main^{tree}') && git update-ref refs/heads/main $c");
  std::string mine = Rev(ws, "main");

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.err.find(".git/refs/heads/main: moved since the session") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("`git update-ref refs/heads/main " + g.c1 + "` finishes it") != std::string::npos, r.err);
  // Only main is left: the work tree, HEAD, the other branch and the index are restored.
  CheckUndone(ws);
  BOOST_TEST(Rev(ws, "main") == mine);
  BOOST_TEST(GitOut(ws, {"show", ":a.txt"}) == "one\n");
  BOOST_TEST(GitOut(ws, {"show", ":other.txt"}) == "the user's\n");
  CheckFsck(ws);
  // The command it names finishes it.
  GitOut(ws, {"update-ref", "refs/heads/main", g.c1});
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "M  other.txt\n");
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ReplayAfterUndoBringsTheBranchesAndTheStagingBack) {
  Workspace ws;
  GitSession g = RunGitSession(ws);
  std::string status_after = GitOut(ws, {"status", "--porcelain"});
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  UserStagesOther(ws);

  GuardResult r = RunGuardCommand(ws, {"replay", "--yes"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(TrimEnd(GitOut(ws, {"symbolic-ref", "HEAD"})) == "refs/heads/feature");
  BOOST_TEST(Rev(ws, "main") == g.c2);
  BOOST_TEST(Rev(ws, "feature") == g.c2);
  BOOST_TEST(ws.Read("README") == "edited\n");
  BOOST_TEST(ws.Read("new.txt") == "new\n");
  // The session's staging back (new.txt), the user's kept (other.txt).
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == " M README\nA  new.txt\nM  other.txt\n");
  BOOST_TEST(status_after == " M README\nA  new.txt\n");
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ReplayOverABranchMovedSinceLeavesThatBranchAlone) {
  Workspace ws;
  GitSession g = RunGitSession(ws);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  RunInTree(ws, "c=$(git commit-tree -p main -m mine 'main^{tree}') && git update-ref refs/heads/main $c");
  std::string mine = Rev(ws, "main");

  GuardResult r = RunGuardCommand(ws, {"replay", "--yes"});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.err.find(".git/refs/heads/main: moved since the session (it is " + mine.substr(0, 7) +
                        " now); `git update-ref refs/heads/main " + g.c2 + "` finishes it") != std::string::npos,
             r.err);
  BOOST_TEST(Rev(ws, "main") == mine);
  BOOST_TEST(TrimEnd(GitOut(ws, {"symbolic-ref", "HEAD"})) == "refs/heads/feature");
  BOOST_TEST(Rev(ws, "feature") == g.c2);
  BOOST_TEST(ws.Read("new.txt") == "new\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == " M README\nA  new.txt\n");
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ASessionThatRanGitGcOverPackedRefsIsUndoneWithoutConflict) {
  Workspace ws;
  ws.Write("a.txt", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one && git branch side && git pack-refs --all");
  std::string c1 = Rev(ws, "main");
  // A commit on a packed branch, a packed branch deleted, loose objects
  // packed and pruned, refs packed again.
  Guarded(ws, "echo two > a.txt; git commit -qam two; git branch -D -q side; git gc -q --prune=now");
  BOOST_REQUIRE(!RefExists(ws, "refs/heads/side"));

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find("left as it is") == std::string::npos, r.err);
  BOOST_TEST(Rev(ws, "main") == c1);
  BOOST_TEST(Rev(ws, "side") == c1);
  BOOST_TEST(ws.Read("a.txt") == "one\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "");
  CheckFsck(ws);

  GuardResult back = RunGuardCommand(ws, {"replay", "--yes"});
  BOOST_TEST(back.exit_code == 0, DescribeResult(back));
  BOOST_TEST(Rev(ws, "main") != c1);
  BOOST_TEST(!RefExists(ws, "refs/heads/side"));
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "");
  CheckFsck(ws);
}

// The branches were loose files when the session began, and its `git gc`
// packed them without moving them: packed-refs is the session's and goes
// with the undo, so the branches are written back as the loose refs they
// were (before, main and keep were gone after the undo: a repository with
// no commit on its branch).
BOOST_AUTO_TEST_CASE(BranchesAGitGcPackedWithoutMovingThemOutliveTheUndo) {
  Workspace ws;
  ws.Write("a.txt", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one && git branch keep");
  const std::string c1 = Rev(ws, "main");
  BOOST_REQUIRE(std::filesystem::exists(ws.Path(".git/refs/heads/main")));
  Guarded(ws, "git gc -q --prune=now; echo two > a.txt");
  BOOST_REQUIRE(!std::filesystem::exists(ws.Path(".git/refs/heads/main")));

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find("left as it is") == std::string::npos, r.err);
  BOOST_TEST(Rev(ws, "main") == c1);
  BOOST_TEST(Rev(ws, "keep") == c1);
  BOOST_TEST(!ws.Exists(".git/packed-refs"));
  BOOST_TEST(ws.Read("a.txt") == "one\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == "");
  CheckFsck(ws);

  GuardResult back = RunGuardCommand(ws, {"replay", "--yes"});
  BOOST_TEST(back.exit_code == 0, DescribeResult(back));
  BOOST_TEST(Rev(ws, "main") == c1);
  BOOST_TEST(Rev(ws, "keep") == c1);
  BOOST_TEST(ws.Read("a.txt") == "two\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain"}) == " M a.txt\n");
  CheckFsck(ws);
}

// refs/stash's reflog is the stash list: undo and redo of a `git stash`
// give it back as it was, with no entry of the restore's own (before, a
// redo added "stash@{0}: guard redo: session ..." above the stash it
// brought back). With a stash made before the session, the same for undo.
BOOST_AUTO_TEST_CASE(TheStashListComesBackAsItWas) {
  Workspace ws;
  ws.Write("a.txt", "one\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one && echo first > a.txt && git stash -q");
  const std::string before = GitOut(ws, {"stash", "list"});
  BOOST_REQUIRE(before.find("stash@{0}") != std::string::npos);
  ws.Write("a.txt", "second\n");
  Guarded(ws, "git stash -q");
  const std::string after = GitOut(ws, {"stash", "list"});
  BOOST_REQUIRE(after.find("stash@{1}") != std::string::npos);

  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(GitOut(ws, {"stash", "list"}) == before);
  BOOST_TEST(ws.Read("a.txt") == "second\n");
  CheckFsck(ws);

  GuardResult redo = RunGuardCommand(ws, {"redo", "--yes"});
  BOOST_TEST(redo.exit_code == 0, DescribeResult(redo));
  BOOST_TEST(GitOut(ws, {"stash", "list"}) == after);
  BOOST_TEST(ws.Read("a.txt") == "one\n");
  RunInTree(ws, "git stash pop -q");
  BOOST_TEST(ws.Read("a.txt") == "second\n");
  BOOST_TEST(GitOut(ws, {"stash", "list"}) == before);
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(HooksAndConfigComeBackExactlyEvenWhenChangedSince) {
  Workspace ws;
  GitSession g = RunGitSession(ws, "; printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit; "
                                   "chmod +x .git/hooks/pre-commit; git config core.pager 'sh -c evil'");
  // The user changes the config since: the agent's setting must go all the same.
  GitOut(ws, {"config", "user.name", "someone"});

  GuardResult r = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err.find(".git/config: restored although it changed since the session") != std::string::npos, r.err);
  CheckUndone(ws);
  BOOST_TEST(ws.Read(".git/config") == g.config);
  BOOST_TEST(!ws.Exists(".git/hooks/pre-commit"));
  CheckFsck(ws);
}

BOOST_AUTO_TEST_CASE(ExportNamesOnlyTheUsersFilesInsideGit) {
  Workspace ws;
  RunGitSession(ws);
  GuardResult plain = RunGuardCommand(ws, {"export"});
  BOOST_TEST(plain.exit_code == 0, DescribeResult(plain));
  BOOST_TEST(plain.err.find(".git") == std::string::npos, plain.err);  // git's bookkeeping only: nothing to say

  GuardResult hook = Guarded(ws, "printf '#!/bin/sh\\n' > .git/hooks/pre-push; git commit -qam three");
  GuardResult r = RunGuardCommand(ws, {"export", "--session", hook.new_sessions[0]});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.err == "guard: not in the patch: the session's changes to .git/hooks/pre-push (a patch cannot carry "
                      "a repository's own files; --format tar has them)\n");
}

}  // namespace
}  // namespace guard::e2e
