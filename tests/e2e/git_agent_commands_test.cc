// The git commands an agent runs, each in a session of its own, undone and
// redone: after `guard undo` the repository is as it was before the
// session (every ref but guard's own refs/guard/, HEAD, `git status`, the
// stash list, .git/config's settings, the work tree's files byte for byte) and `git fsck` passes;
// after `guard redo`, the same as at the session's end. A table: each row
// a script run in a repository on main with two commits, a branch `side`
// with a commit of its own on the first, and an edit not staged. The rows that found bugs: `git gc`
// over loose branches (the branches were gone after undo) and `git stash`
// (a redo added an entry of its own to the stash list).
#define BOOST_TEST_MODULE git_agent_commands
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/e2e/support/git_process.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// What a user of the repository sees, one line each: the refs (not
// guard's checkpoints), HEAD, the branch it names, `git status`, the
// stash list, the repository's own configuration, and the hash of each
// file of the work tree.
std::string RepositoryState(const Workspace& ws) {
  ProcessSpec spec;
  spec.argv = {"bash", "-c",
               "git for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/guard/'; "
               "echo HEAD $(git rev-parse HEAD); git symbolic-ref -q HEAD; git status --porcelain; "
               "git stash list; git config --local --list; find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 -r sha1sum"};
  spec.cwd = ws.tree();
  spec.env = GitTestEnv(ws);
  ProcessResult r = RunProcess(spec);
  return r.out + r.err;
}

struct Row {
  const char* script;
  bool visible = true;  // false: it changes only git's storage (packs, packed-refs), not what a user sees
};

const std::vector<Row> kRows = {
    {"git stash -q"},
    {"git stash -q && echo x > x && git stash pop -q"},
    {"git stash -q && git stash drop -q"},
    {"git stash -q && echo z > z && git stash -q -u"},
    {"git commit -qam three"},
    {"git commit -q --amend -m amended"},
    {"git reset -q --hard HEAD~1"},
    {"git commit -q --allow-empty -m e && git reset -q --soft HEAD~2"},
    {"git checkout -q side"},
    {"git checkout -q HEAD~1"},
    {"git switch -q -c new && echo x > x && git add x && git commit -qm x"},
    {"git branch -m main main2"},
    {"git branch -D -q side"},
    {"git update-ref -d refs/heads/side"},
    {"git rebase -q --autostash side"},
    {"git commit -qam wip && git rebase -q -i --exec true side"},
    {"git merge -q side -m merged"},
    {"git cherry-pick side >/dev/null 2>&1 || true"},
    {"git revert --no-edit HEAD >/dev/null"},
    {"git gc -q --prune=now", false},
    {"git pack-refs --all", false},
    {"git repack -adq", false},
    {"git tag v1 && git tag -a v2 -m annotated"},
    {"git notes add -m note"},
    {"git rm -q d/c && git commit -qm removed"},
    {"git mv a A && git commit -qm moved"},
    {"git rm -rqf . && git commit -qm emptied"},
    {"git clean -fdq; echo n > n"},
    {"git restore b"},
    {"git add -A"},
    {"git config user.name someone-else"},
    {"git symbolic-ref HEAD refs/heads/side"},
};

BOOST_AUTO_TEST_CASE(EachCommandIsUndoneAndRedoneTheGitWay) {
  for (const Row& row : kRows) {
    BOOST_TEST_CONTEXT(row.script) {
      Workspace ws;
      RunInTree(ws, "git init -q -b main . && echo a > a && echo b > b && mkdir d && echo c > d/c && git add -A && "
                    "git commit -qm one && echo a2 >> a && git commit -qam two && git checkout -q -b side HEAD~1 && "
                    "echo s > s && git add s && git commit -qm side && git checkout -q main && echo dirty >> b");
      const std::string before = RepositoryState(ws);
      GuardRun run;
      run.command = {"bash", "-ec", row.script};
      run.env = GitTestEnv(ws);
      run.env["GIT_SEQUENCE_EDITOR"] = "true";
      run.env["GIT_EDITOR"] = "true";
      GuardResult g = RunGuard(ws, run);
      BOOST_TEST(g.exit_code == 0, DescribeResult(g));
      if (g.new_sessions.size() != 1) {
        BOOST_TEST(g.new_sessions.size() == 1u, DescribeResult(g));
        continue;
      }
      const std::string after = RepositoryState(ws);
      if (row.visible) BOOST_TEST(after != before, "the script changed nothing");

      GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", g.new_sessions[0]});
      BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
      BOOST_TEST(undo.err.find("left as it is") == std::string::npos, undo.err);
      BOOST_TEST(RepositoryState(ws) == before, "after undo");
      CheckFsck(ws);

      GuardResult redo = RunGuardCommand(ws, {"redo", "--yes"});
      BOOST_TEST(redo.exit_code == 0, DescribeResult(redo));
      BOOST_TEST(RepositoryState(ws) == after, "after redo");
      CheckFsck(ws);
    }
  }
}

}  // namespace
}  // namespace guard::e2e
