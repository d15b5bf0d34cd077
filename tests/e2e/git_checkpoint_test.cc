// Checkpoints and `guard commit` against real git repositories: a
// checkpoint holds the session's state of the paths it touched (untracked
// and ignored ones too, never .git or guard's state), chains onto HEAD at
// the session's start, leaves HEAD, the index, the status and every other
// ref byte for byte as they were, survives `guard undo`, and is history git
// reads, diffs, checks out and pushes; `guard commit` commits exactly the
// session's paths and refuses when one changed since.
#define BOOST_TEST_MODULE git_checkpoint
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/workspace.h"
#include "tests/e2e/support/preload_blind.h"

namespace guard::e2e {
namespace {

ProcessResult Git(const Workspace& ws, const std::vector<std::string>& args, const std::string& cwd = "") {
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd.empty() ? ws.tree() : cwd;
  spec.env = GitTestEnv(ws);
  return RunProcess(spec);
}

// git's answer, which must succeed.
std::string GitOut(const Workspace& ws, const std::vector<std::string>& args) {
  ProcessResult r = Git(ws, args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "git " << args[0] << ": " << DescribeResult(r));
  return r.out;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// What a checkpoint must leave exactly as it was.
struct GitState {
  std::string status, head_file, head, index, refs;
  bool operator==(const GitState&) const = default;
};

GitState ReadGitState(const Workspace& ws) {
  GitState s;
  // The index first: a plain `git status` may rewrite it (stat refresh).
  s.index = ws.Read(".git/index");
  s.status = GitOut(ws, {"--no-optional-locks", "status", "--porcelain=v2", "--branch", "--untracked-files=all",
                         "--ignored"});
  s.head_file = ws.Read(".git/HEAD");
  s.head = GitOut(ws, {"rev-parse", "HEAD"});
  for (const std::string& line :
       [&] {
         std::vector<std::string> lines;
         std::string all = GitOut(ws, {"for-each-ref", "--format=%(refname) %(objectname)"});
         for (size_t at = 0, nl; (nl = all.find('\n', at)) != std::string::npos; at = nl + 1)
           lines.push_back(all.substr(at, nl - at));
         return lines;
       }()) {
    if (line.rfind("refs/guard/", 0) != 0) s.refs += line + "\n";
  }
  return s;
}

GuardResult Guarded(const Workspace& ws, const std::string& script, std::vector<std::string> options = {}) {
  GuardRun run;
  run.command = {"bash", "-ec", script};
  run.env = GitTestEnv(ws);
  run.guard_options = std::move(options);
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  return r;
}

GuardResult Command(const Workspace& ws, std::vector<std::string> args) {
  GuardCommand c;
  c.args = std::move(args);
  return RunGuardCommand(ws, c);
}

// A repository with one commit, an ignored pattern, a staged change and an
// unstaged one the sessions leave alone.
void MakeRepository(const Workspace& ws) {
  ws.Write("README", "one\n");
  ws.Write("gone.txt", "to be deleted\n");
  ws.Write("staged.txt", "committed\n");
  ws.Write("unstaged.txt", "committed\n");
  ws.Write(".gitignore", ".env\n");
  ws.Mkdir("src");
  ws.Write("src/a.c", "int a;\n");
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one");
  ws.Write("staged.txt", "staged by the user\n");
  RunInTree(ws, "git add staged.txt");
  ws.Write("unstaged.txt", "edited by the user, not staged\n");
}

// The session: a tracked file changed, one deleted, an untracked one and an
// ignored one created, a file in a new directory, a symlink.
const char* const kWork =
    "echo two > README; rm gone.txt; echo new > new.txt; echo SECRET=1 > .env; "
    "mkdir -p lib/deep; echo 'int b;' > lib/deep/b.c; ln -s README link; chmod +x src/a.c";

BOOST_AUTO_TEST_CASE(EndCheckpointHoldsTheSessionStateAndLeavesGitAsItWas) {
  Workspace ws;
  MakeRepository(ws);
  GitState before = ReadGitState(ws);
  std::string head = Trim(before.head);
  std::string id = Guarded(ws, kWork).new_sessions[0];
  std::string ref = "refs/guard/" + id;

  GitState after = ReadGitState(ws);
  // The session's own work shows in the status; nothing else may differ.
  BOOST_TEST(after.head_file == before.head_file);
  BOOST_TEST(after.head == before.head);
  BOOST_TEST(after.index == before.index);
  BOOST_TEST(after.refs == before.refs);
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", ref + "^"})) == head);

  for (const char* path : {"README", "new.txt", ".env", "lib/deep/b.c", "src/a.c", "staged.txt", "unstaged.txt"}) {
    std::string in_ref = GitOut(ws, {"show", ref + ":" + path});
    std::string expected = std::string(path) == "staged.txt" || std::string(path) == "unstaged.txt"
                               ? "committed\n"  // untouched by the session: as in HEAD
                               : ws.Read(path);
    BOOST_TEST(in_ref == expected, path);
  }
  std::string tree = GitOut(ws, {"ls-tree", "-r", ref});
  BOOST_TEST(tree.find("gone.txt") == std::string::npos);
  BOOST_TEST(tree.find("100755 blob") != std::string::npos);  // src/a.c made executable
  BOOST_TEST(tree.find("120000 blob") != std::string::npos);  // the symlink
  BOOST_TEST(GitOut(ws, {"show", ref + ":link"}) == "README");
  BOOST_TEST(tree.find("\t.git/") == std::string::npos);

  // Asked again: nothing changed since, no new commit, nothing moved.
  GuardResult again = Command(ws, {"checkpoint", "--session", id});
  BOOST_TEST(again.exit_code == 0, DescribeResult(again));
  BOOST_TEST(again.out.find("nothing changed") != std::string::npos, again.out);
  GitState last = ReadGitState(ws);
  BOOST_TEST(last.status == after.status);
  BOOST_TEST(last.index == after.index);
  BOOST_TEST(last.refs == after.refs);
}

BOOST_AUTO_TEST_CASE(CheckpointsAreHistoryGitLogsDiffsChecksOutAndPushes) {
  Workspace ws;
  MakeRepository(ws);
  std::string id = Guarded(ws, kWork).new_sessions[0];
  std::string ref = "refs/guard/" + id;
  BOOST_TEST(GitOut(ws, {"log", "--format=%s", ref}).find("guard session " + id) != std::string::npos);
  std::string diff = GitOut(ws, {"diff", "HEAD", ref, "--", "README"});
  BOOST_TEST(diff.find("+two") != std::string::npos, diff);
  ws.Write("README", "overwritten later\n");
  GitOut(ws, {"checkout", ref, "--", "README"});
  BOOST_TEST(ws.Read("README") == "two\n");

  std::string remote = ws.outside() + "/remote.git";
  BOOST_REQUIRE(Git(ws, {"init", "-q", "--bare", remote}).exit_code == 0);
  ProcessResult push = Git(ws, {"push", "-q", remote, "refs/guard/*"});
  BOOST_REQUIRE_MESSAGE(push.exit_code == 0, DescribeResult(push));
  ProcessResult listed = Git(ws, {"--git-dir", remote, "for-each-ref", "--format=%(refname) %(objectname)"}, ws.outside());
  BOOST_TEST(listed.out == ref + " " + GitOut(ws, {"rev-parse", ref}));
  BOOST_TEST(Git(ws, {"--git-dir", remote, "fsck", "--no-progress"}, ws.outside()).exit_code == 0);
}

// A repository whose branch main holds `on_main` and whose branch other
// holds `on_other` over it, checked out at main.
void MakeMainAndOther(const Workspace& ws, const std::map<std::string, std::string>& on_main,
                      const std::map<std::string, std::string>& on_other) {
  for (const auto& [path, content] : on_main) ws.Write(path, content);
  RunInTree(ws, "git init -q -b main . && git add -A && git commit -qm one && git checkout -q -b other");
  for (const auto& [path, content] : on_other) ws.Write(path, content);
  RunInTree(ws, "git commit -qam other && git checkout -q main");
}

// The end checkpoint takes the blob ids of files git wrote from git's index
// (supervisor/git/index_oids.h) instead of hashing their saved content.
// After a `git checkout` the session rewrites one of the files git just
// wrote to the same size, and adds a line to another: the checkpoint must
// hold what the session left, not what the index says git wrote, and the
// files git wrote untouched as the branch has them. git fsck: every blob
// the tree names is in the repository.
BOOST_AUTO_TEST_CASE(EndCheckpointAfterGitCheckoutHoldsWhatTheSessionLeftNotWhatTheIndexSays) {
  Workspace ws;
  MakeMainAndOther(ws, {{"f1.txt", "one\n"}, {"f2.txt", "two\n"}, {"f3.txt", "three\n"}},
                   {{"f1.txt", "ONE\n"}, {"f2.txt", "TWO\n"}, {"f3.txt", "THREE\n"}});
  std::string id = Guarded(ws, "git checkout -q other; printf 'TWX\\n' > f2.txt; echo more >> f3.txt").new_sessions[0];
  std::string ref = "refs/guard/" + id;
  BOOST_TEST(GitOut(ws, {"show", ref + ":f1.txt"}) == "ONE\n");
  BOOST_TEST(GitOut(ws, {"show", ref + ":f2.txt"}) == "TWX\n");
  BOOST_TEST(GitOut(ws, {"show", ref + ":f3.txt"}) == "THREE\nmore\n");
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", ref + ":f1.txt"})) == Trim(GitOut(ws, {"rev-parse", "other:f1.txt"})));
  BOOST_TEST(Git(ws, {"fsck", "--no-progress", "--no-dangling"}).exit_code == 0);
}

// A checkpoint holds the bytes guard saved, which under `eol=crlf` are not
// the blob git stored for the same file (git's clean filter turned CRLF
// into LF on the way in): the index's id is not taken for such a file, so a
// file git wrote and one the session rewrote to the same bytes are the
// same blob in the checkpoint (review of 2c8ad75).
BOOST_AUTO_TEST_CASE(EndCheckpointOfFilesGitFiltersHoldsTheirBytesWhoeverWroteThem) {
  Workspace ws;
  MakeMainAndOther(ws, {{".gitattributes", "*.txt text eol=crlf\n"}, {"f1.txt", "one\n"}, {"f2.txt", "two\n"}},
                   {{"f1.txt", "ONE\n"}, {"f2.txt", "TWO\n"}});
  std::string id =
      Guarded(ws, "git checkout -q other; git status --porcelain >/dev/null; cat f2.txt > t; mv t f2.txt")
          .new_sessions[0];
  std::string ref = "refs/guard/" + id;
  BOOST_REQUIRE(ws.Read("f1.txt") == "ONE\r\n");
  BOOST_TEST(GitOut(ws, {"cat-file", "blob", ref + ":f1.txt"}) == ws.Read("f1.txt"));
  BOOST_TEST(GitOut(ws, {"cat-file", "blob", ref + ":f2.txt"}) == ws.Read("f2.txt"));
}

BOOST_AUTO_TEST_CASE(PeriodicCheckpointsChainOntoHeadAtTheStart) {
  Workspace ws;
  MakeRepository(ws);
  std::string head = Trim(GitOut(ws, {"rev-parse", "HEAD"}));
  // Each step waits (a hang guard bounds it) until a checkpoint holds the
  // previous one's content, so that the test does not depend on speed. The
  // session also moves HEAD: the chain stays on HEAD at the start.
  std::string wait_for = "until [ \"$(git cat-file -p refs/guard/$GUARD_SESSION:counter 2>/dev/null)\" = $n ]; "
                         "do sleep 0.05; done; ";
  std::string script = "for n in 1 2 3; do echo $n > counter; " + wait_for + "done; git commit -qam moved";
  std::string id = Guarded(ws, script, {"--checkpoint-every", "1s"}).new_sessions[0];
  std::string ref = "refs/guard/" + id;
  std::string chain = GitOut(ws, {"rev-list", "--first-parent", ref});
  std::vector<std::string> commits;
  for (size_t at = 0, nl; (nl = chain.find('\n', at)) != std::string::npos; at = nl + 1)
    commits.push_back(chain.substr(at, nl - at));
  BOOST_REQUIRE_GE(commits.size(), 4u);  // three counters at least, and HEAD
  BOOST_TEST(commits.back() == head);
  BOOST_TEST(Trim(GitOut(ws, {"rev-list", "--count", ref, "^" + head})) == std::to_string(commits.size() - 1));
  // Every counter value was a checkpoint of its own, in order.
  std::string seen;
  for (auto it = commits.rbegin() + 1; it != commits.rend(); ++it) {
    std::string c = Trim(GitOut(ws, {"show", *it + ":counter"}));
    if (seen.empty() || seen.back() != c.back()) seen += c;
  }
  BOOST_TEST(seen == "123");
}

BOOST_AUTO_TEST_CASE(CheckpointOfADeadSessionHoldsItsWork) {
  Workspace ws;
  MakeRepository(ws);
  KillWhen when;
  when.script = "echo dead work > dead.txt; echo two > README; sleep 1000";
  when.ready_for_kill = [&](const std::string& id) { return PostImagesMatchTree(ws, id, {"dead.txt", "README"}); };
  KilledSession killed = RunAndKillGuard(ws, when);
  // The agent's tree moved on after the kill; the checkpoint holds the session's end.
  ws.Write("README", "edited after the session\n");
  GuardResult r = Command(ws, {"checkpoint", "--session", killed.id});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  std::string ref = "refs/guard/" + killed.id;
  BOOST_TEST(GitOut(ws, {"show", ref + ":dead.txt"}) == "dead work\n");
  BOOST_TEST(GitOut(ws, {"show", ref + ":README"}) == "two\n");
}

BOOST_AUTO_TEST_CASE(UndoOfASessionThatRanGitLeavesTheCheckpointWhole) {
  Workspace ws;
  MakeRepository(ws);
  // The session commits with git: the checkpoint's blobs and trees are the
  // very objects the session wrote loose into .git, which the undo leaves.
  std::string id = Guarded(ws, "echo agent > agent.txt; git add agent.txt; git commit -qm agent").new_sessions[0];
  std::string ref = "refs/guard/" + id;
  GuardResult undo = Command(ws, {"undo", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(!ws.Exists("agent.txt"));
  BOOST_TEST(GitOut(ws, {"show", ref + ":agent.txt"}) == "agent\n");
  BOOST_TEST(GitOut(ws, {"ls-tree", "-r", "--name-only", ref}) == ".gitignore\nREADME\nagent.txt\ngone.txt\nsrc/a.c\nstaged.txt\nunstaged.txt\n");
  ProcessResult fsck = Git(ws, {"fsck", "--no-progress", "--no-dangling"});
  BOOST_TEST(fsck.exit_code == 0, DescribeResult(fsck));
  // The undo's own session wrote no checkpoint.
  std::string refs = GitOut(ws, {"for-each-ref", "--format=%(refname)", "refs/guard/"});
  BOOST_TEST(refs == ref + "\n");
}

std::set<std::string> PackFiles(const Workspace& ws) {
  std::set<std::string> out;
  std::string all = GitOut(ws, {"rev-parse", "--git-path", "objects/pack"});
  std::string dir = ws.Path(Trim(all));
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".pack") out.insert(e.path().string());
  }
  return out;
}

// A checkpoint's objects are a pack of their own that git checks whole
// (verify-pack, fsck --full), every object stored whole: no delta search,
// whose cost made large checkpoints slow (docs/measurements.md §5); git gc
// finds the deltas later.
BOOST_AUTO_TEST_CASE(CheckpointPackHoldsEveryObjectWholeAndGitVerifiesIt) {
  Workspace ws;
  MakeRepository(ws);
  std::set<std::string> before = PackFiles(ws);
  // Thirty near-identical files, which a delta search stores as deltas.
  Guarded(ws, "mkdir similar; for i in $(seq 30); do { seq 1000; echo $i; } > similar/f$i; done");
  std::set<std::string> after = PackFiles(ws);
  std::vector<std::string> added;
  for (const std::string& p : after)
    if (!before.count(p)) added.push_back(p);
  BOOST_REQUIRE_EQUAL(added.size(), 1u);  // the end checkpoint's
  ProcessResult verify = Git(ws, {"verify-pack", "-v", added[0]});
  BOOST_REQUIRE_MESSAGE(verify.exit_code == 0, DescribeResult(verify));
  BOOST_TEST(verify.out.find("chain length") == std::string::npos, verify.out);
  BOOST_TEST(verify.out.find("non delta: 33 objects") != std::string::npos, verify.out);  // 30 blobs, 2 trees, 1 commit
  ProcessResult fsck = Git(ws, {"fsck", "--full", "--strict", "--no-progress", "--no-dangling"});
  BOOST_TEST(fsck.exit_code == 0, DescribeResult(fsck));
}

BOOST_AUTO_TEST_CASE(GuardHomeInsideTheTreeIsNeverCommitted) {
  Workspace ws;
  MakeRepository(ws);
  GuardRun run;
  std::string home = ws.Path("guard-home");
  run.command = {"bash", "-ec", "echo x > x.txt; echo y > guard-home/try 2>/dev/null || true"};
  run.env = GitTestEnv(ws);
  run.env["GUARD_HOME"] = home;
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  ProcessSpec spec;
  spec.argv = {"git", "for-each-ref", "--format=%(refname)", "refs/guard/"};
  spec.cwd = ws.tree();
  spec.env = GitTestEnv(ws);
  std::string ref = Trim(RunProcess(spec).out);
  BOOST_REQUIRE(!ref.empty());
  std::string tree = GitOut(ws, {"ls-tree", "-r", "--name-only", ref});
  BOOST_TEST(tree.find("x.txt") != std::string::npos);
  BOOST_TEST(tree.find("guard-home") == std::string::npos, tree);
}

BOOST_AUTO_TEST_CASE(CommitHoldsExactlyTheSessionPathsAndLeavesOtherChangesWhereTheyWere) {
  Workspace ws;
  MakeRepository(ws);
  std::string head = Trim(GitOut(ws, {"rev-parse", "HEAD"}));
  std::string id = Guarded(ws, kWork).new_sessions[0];
  GuardResult refused = Command(ws, {"commit", "--session", id});
  BOOST_TEST(refused.exit_code == 2, DescribeResult(refused));  // no terminal, no --yes
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", "HEAD"})) == head);

  GuardResult r = Command(ws, {"commit", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", "HEAD^"})) == head);
  BOOST_TEST(Trim(GitOut(ws, {"symbolic-ref", "HEAD"})) == "refs/heads/main");
  std::string changed = GitOut(ws, {"diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"});
  // The ignored .env is left out, as `git add` leaves it (git_commit_safety_test.cc).
  BOOST_TEST(changed == "M\tREADME\nD\tgone.txt\nA\tlib/deep/b.c\nA\tlink\nA\tnew.txt\nM\tsrc/a.c\n");
  BOOST_TEST(GitOut(ws, {"log", "-1", "--format=%s"}).find("guard session " + id) != std::string::npos);
  // The user's staged change is still staged and not in the commit; the
  // unstaged one is still only in the tree; the session's paths are clean.
  BOOST_TEST(GitOut(ws, {"show", "HEAD:staged.txt"}) == "committed\n");
  BOOST_TEST(GitOut(ws, {"diff", "--cached", "--name-only"}) == "staged.txt\n");
  BOOST_TEST(GitOut(ws, {"diff", "--name-only"}) == "unstaged.txt\n");
  BOOST_TEST(ws.Read("unstaged.txt") == "edited by the user, not staged\n");
  BOOST_TEST(GitOut(ws, {"status", "--porcelain", "--untracked-files=all"}) == "M  staged.txt\n M unstaged.txt\n");
  BOOST_TEST(Git(ws, {"fsck", "--full", "--strict", "--no-progress"}).exit_code == 0);
}

BOOST_AUTO_TEST_CASE(CommitOfSomePathsOnlyCommitsThose) {
  Workspace ws;
  MakeRepository(ws);
  std::string id = Guarded(ws, kWork).new_sessions[0];
  GuardResult r = Command(ws, {"commit", "--yes", "--session", id, "lib", "README"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(GitOut(ws, {"diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"}) ==
             "M\tREADME\nA\tlib/deep/b.c\n");
}

BOOST_AUTO_TEST_CASE(CommitRefusesAPathChangedSinceTheSession) {
  Workspace ws;
  MakeRepository(ws);
  std::string head = Trim(GitOut(ws, {"rev-parse", "HEAD"}));
  std::string id = Guarded(ws, kWork).new_sessions[0];
  ws.Write("new.txt", "changed by the user since\n");
  std::string index = ws.Read(".git/index");
  GuardResult r = Command(ws, {"commit", "--yes", "--session", id});
  BOOST_TEST(r.exit_code == 1, DescribeResult(r));
  BOOST_TEST(r.err.find("conflict: new.txt") != std::string::npos, r.err);
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", "HEAD"})) == head);
  BOOST_TEST(ws.Read(".git/index") == index);
}

// `guard checkpoint --at MARK` commits the state at that mark, names it in
// its message; the default messages of checkpoints and commits list the
// session's turn marks (not its steps). A mark the session lacks is a usage
// error that writes nothing.
BOOST_AUTO_TEST_CASE(CheckpointAtAMarkHoldsTheStateThereAndMessagesListTheMarks, GUARD_PRELOAD_BLIND("guard mark: a call only the tracer stops")) {
  Workspace ws;
  MakeRepository(ws);
  const std::string g = "'" + GuardBinary() + "'";
  GuardResult r = Guarded(ws, g + " mark 'prompt: first'; echo one > turn.txt; " + g +
                                  " mark --step Bash; " + g + " mark 'prompt: second'; echo two > turn.txt; "
                                  "echo more > second.txt");
  const std::string id = r.new_sessions[0], ref = "refs/guard/" + id;
  // The end checkpoint lists both turns, not the step.
  std::string end_message = GitOut(ws, {"log", "-1", "--format=%B", ref});
  BOOST_TEST(end_message.find("@1 prompt: first") != std::string::npos, end_message);
  BOOST_TEST(end_message.find("@3 prompt: second") != std::string::npos, end_message);
  BOOST_TEST(end_message.find("Bash") == std::string::npos, end_message);

  std::string before = Trim(GitOut(ws, {"rev-parse", ref}));
  GuardResult missing = Command(ws, {"checkpoint", "--session", id, "--at", "no such mark"});
  BOOST_TEST(missing.exit_code == 2, DescribeResult(missing));
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", ref})) == before);

  GuardResult at = Command(ws, {"checkpoint", "--session", id, "--at", "prompt: second"});
  BOOST_REQUIRE_MESSAGE(at.exit_code == 0, DescribeResult(at));
  BOOST_TEST(Trim(GitOut(ws, {"rev-parse", ref + "^"})) == before);
  BOOST_TEST(GitOut(ws, {"show", ref + ":turn.txt"}) == "one\n");
  BOOST_TEST(Git(ws, {"cat-file", "-e", ref + ":second.txt"}).exit_code != 0);
  std::string at_message = GitOut(ws, {"log", "-1", "--format=%B", ref});
  BOOST_TEST(at_message.find("At mark @3 prompt: second") != std::string::npos, at_message);

  GuardResult commit = Command(ws, {"commit", "--session", id, "--yes"});
  BOOST_REQUIRE_MESSAGE(commit.exit_code == 0, DescribeResult(commit));
  std::string commit_message = GitOut(ws, {"log", "-1", "--format=%B", "HEAD"});
  BOOST_TEST(commit_message.find("@1 prompt: first") != std::string::npos, commit_message);
  BOOST_TEST(commit_message.find("@3 prompt: second") != std::string::npos, commit_message);
}

BOOST_AUTO_TEST_CASE(HelpDescribesCheckpointAndCommit) {
  Workspace ws;
  GuardResult c = Command(ws, {"checkpoint", "--help"});
  BOOST_TEST(c.exit_code == 0);
  BOOST_TEST(c.out.find("refs/guard/<session-id>") != std::string::npos, c.out);
  BOOST_TEST(c.out.find("--session") != std::string::npos);
  BOOST_TEST(c.out.find("-m,--message") != std::string::npos);
  GuardResult m = Command(ws, {"commit", "--help"});
  BOOST_TEST(m.exit_code == 0);
  BOOST_TEST(m.out.find("--yes") != std::string::npos, m.out);
  BOOST_TEST(m.out.find("other staged changes stay staged") != std::string::npos, m.out);
  GuardResult top = Command(ws, {"--help"});
  BOOST_TEST(top.out.find("--checkpoint-every") != std::string::npos, top.out);
}

}  // namespace
}  // namespace guard::e2e
