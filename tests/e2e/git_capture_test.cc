// git rewriting a work tree: checkout between two commits and reset --hard
// over uncommitted work. git replaces a file by unlinking it and creating it
// anew, so every file whose content changes must have its old content (the
// committed one, or the uncommitted edits reset throws away) in the session.
#define BOOST_TEST_MODULE git_capture
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kDelete = OpKind::kDelete, kMkdir = OpKind::kMkdir,
                 kRmdir = OpKind::kRmdir, kSymlink = OpKind::kSymlink;

// git with no user or system configuration, HOME outside the tree.
std::map<std::string, std::optional<std::string>> GitEnv(const Workspace& ws) {
  return {{"HOME", ws.outside()},          {"GIT_CONFIG_NOSYSTEM", "1"},
          {"GIT_AUTHOR_NAME", "e2e"},      {"GIT_AUTHOR_EMAIL", "e2e@example.com"},
          {"GIT_COMMITTER_NAME", "e2e"},   {"GIT_COMMITTER_EMAIL", "e2e@example.com"},
          {"GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"}, {"GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"}};
}

// Runs bash `script` in the tree, outside guard (the test's own setup).
void Setup(const Workspace& ws, const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"bash", "-ec", script};
  spec.cwd = ws.tree();
  spec.env = GitEnv(ws);
  ProcessResult r = RunProcess(spec);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "setup failed: " << script << "\n" << r.out << r.err);
}

GuardResult GuardedGit(const Workspace& ws, const std::string& script) {
  GuardRun run;
  run.command = {"bash", "-ec", script};
  run.env = GitEnv(ws);
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);
  return r;
}

// A repository with two commits, tagged c1 and c2, checked out at c2.
// Between them: a modified text file, a modified binary file, a deleted
// file, a file made executable, a symlink retargeted, a new directory.
void MakeRepository(const Workspace& ws) {
  ws.Write("README", "version one\n");
  ws.Mkdir("src");
  ws.Write("src/main.c", "int main(void) { return 1; }\n");
  ws.Write("src/util.c", "/* only in c1 */\n");
  ws.Write("data.bin", std::string("\0\1\2\3 one \xff", 12));
  ws.Write("script.sh", "#!/bin/sh\necho hi\n");
  ws.Write("same.txt", "unchanged between the commits\n");
  ws.Symlink("README", "link");
  Setup(ws, "git init -q . && git add -A && git commit -qm one && git tag c1");
  ws.Write("README", "version two, longer than version one\n");
  ws.Write("src/main.c", "int main(void) { return 2; }\n");
  ws.Write("data.bin", std::string("\0\1\2\3 two \xfe\xfd", 13));
  Setup(ws, "git rm -q src/util.c && chmod +x script.sh && ln -sfn src/main.c link && mkdir docs && "
            "echo guide > docs/guide.md && git add -A && git commit -qm two && git tag c2");
}

// Every path's delete comes before its re-creation.
void ExpectDeleteBeforeCreate(const SessionView& s) {
  std::vector<Op> ops = s.OpList();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != kCreate && ops[i].kind != kSymlink) continue;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      BOOST_TEST(!(ops[j].kind == kDelete && ops[j].path == ops[i].path), ops[i] << " before " << ops[j]);
    }
  }
}

BOOST_AUTO_TEST_CASE(GitCheckoutCapturesEveryFileItRewrites) {
  Workspace ws;
  MakeRepository(ws);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = GuardedGit(ws, "git checkout -q c1");

  // git's own order (removals, then the index order) is its business: the
  // set is checked, and that each file is deleted before it is re-created.
  SessionView s = ExpectCapture(ws, r, before,
                                {{kDelete, "docs/guide.md"},
                                 {kRmdir, "docs"},
                                 {kDelete, "README"},
                                 {kCreate, "README"},
                                 {kDelete, "data.bin"},
                                 {kCreate, "data.bin"},
                                 {kDelete, "link"},
                                 {kSymlink, "link"},
                                 {kDelete, "script.sh"},
                                 {kCreate, "script.sh"},
                                 {kDelete, "src/main.c"},
                                 {kCreate, "src/main.c"},
                                 {kCreate, "src/util.c"}},
                                /*ordered=*/false, ".git");
  ExpectDeleteBeforeCreate(s);
  ExpectPreImagesOf(s, before, {"README", "data.bin", "link", "script.sh", "src/main.c", "docs/guide.md"});
  // git's own files (HEAD, index) were rewritten too, and captured.
  ExpectPreImagesOf(s, before, {".git/HEAD", ".git/index"});
  BOOST_TEST(ws.Read("README") == "version one\n");
}

BOOST_AUTO_TEST_CASE(GitResetHardCapturesTheUncommittedWorkItDiscards) {
  Workspace ws;
  MakeRepository(ws);
  Setup(ws, "git checkout -q c1");
  // Work in progress that reset --hard throws away.
  ws.Write("README", "uncommitted edit of README\n");
  ws.Write("src/util.c", "/* uncommitted edit of a file c2 deletes */\n", 0600);
  ws.Write("untracked.txt", "reset --hard leaves untracked files alone\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = GuardedGit(ws, "git reset -q --hard c2");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kDelete, "src/util.c"},
                                 {kDelete, "README"},
                                 {kCreate, "README"},
                                 {kDelete, "data.bin"},
                                 {kCreate, "data.bin"},
                                 {kMkdir, "docs"},
                                 {kCreate, "docs/guide.md"},
                                 {kDelete, "link"},
                                 {kSymlink, "link"},
                                 {kDelete, "script.sh"},
                                 {kCreate, "script.sh"},
                                 {kDelete, "src/main.c"},
                                 {kCreate, "src/main.c"}},
                                /*ordered=*/false, ".git");
  ExpectDeleteBeforeCreate(s);
  ExpectPreImagesOf(s, before, {"README", "src/util.c", "data.bin", "link", "script.sh", "src/main.c"});
  BOOST_TEST(ws.Read("untracked.txt") == "reset --hard leaves untracked files alone\n");
}

}  // namespace
}  // namespace guard::e2e
