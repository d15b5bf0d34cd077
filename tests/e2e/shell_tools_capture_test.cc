// bash redirections and the coreutils an agent runs through its shell tool:
// each real program changes a real temporary tree under guard, and the
// session must hold exactly the operations that happened, with every
// pre-image equal byte for byte to what the tree held before the run.
#define BOOST_TEST_MODULE shell_tools_capture
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/session_mode.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kRename = OpKind::kRename,
                 kDelete = OpKind::kDelete, kMkdir = OpKind::kMkdir, kRmdir = OpKind::kRmdir,
                 kSymlink = OpKind::kSymlink, kLink = OpKind::kLink, kChmod = OpKind::kChmod;

GuardResult MustRun(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stderr:\n" << r.err);
  return r;
}

// Index of the first op on `path` in `ops`, or -1.
int IndexOf(const std::vector<Op>& ops, OpKind kind, const std::string& path) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == kind && ops[i].path == path) return static_cast<int>(i);
  }
  return -1;
}

BOOST_AUTO_TEST_CASE(BashRedirectionsCaptureTruncatedAndAppendedFiles) {
  Workspace ws;
  ws.Write("trunc.txt", "the old content\nover two lines\n", 0640);
  ws.Write("append.txt", "line 1\n");
  ws.Write("emptied.txt", std::string(100000, 'z'), 0600);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "echo new > trunc.txt; echo 'line 2' >> append.txt; echo fresh > new.txt; "
                              ": > emptied.txt; echo again > trunc.txt");

  ExpectCapture(ws, r, before,
                {{kModify, "trunc.txt"}, {kModify, "append.txt"}, {kCreate, "new.txt"},
                 {kModify, "emptied.txt"}, {kModify, "trunc.txt"}});
  BOOST_TEST(ws.Read("trunc.txt") == "again\n");
  BOOST_TEST(ws.Read("append.txt") == "line 1\nline 2\n");
  BOOST_TEST(ws.Read("emptied.txt").empty());
}

BOOST_AUTO_TEST_CASE(RmCapturesAFileAndEveryFileOfANestedTree) {
  Workspace ws;
  ws.Write("single", "alone\n", 0400);
  ws.Mkdir("top");
  ws.Write("top/a.txt", "A\n");
  ws.Mkdir("top/mid", 0700);
  ws.Write("top/mid/b.bin", std::string("\0\1\2binary\xff", 10), 0755);
  ws.Mkdir("top/mid/deep");
  ws.Write("top/mid/deep/c", "");
  ws.Symlink("../a.txt", "top/mid/link");
  ws.Mkdir("top/empty");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "rm -f single && rm -rf top");

  // rm -rf visits a directory in readdir order: check the set, then that
  // every directory is removed after what it held.
  SessionView s = ExpectCapture(ws, r, before,
                                {{kDelete, "single"},
                                 {kDelete, "top/a.txt"},
                                 {kDelete, "top/mid/b.bin"},
                                 {kDelete, "top/mid/deep/c"},
                                 {kDelete, "top/mid/link"},
                                 {kRmdir, "top/mid/deep"},
                                 {kRmdir, "top/mid"},
                                 {kRmdir, "top/empty"},
                                 {kRmdir, "top"}},
                                /*ordered=*/false);
  std::vector<Op> ops = s.OpList();
  BOOST_TEST(IndexOf(ops, kDelete, "single") == 0);
  for (const Op& op : ops) {
    for (const Op& inner : ops) {
      if (inner.path.size() > op.path.size() && inner.path.compare(0, op.path.size() + 1, op.path + "/") == 0) {
        BOOST_TEST(IndexOf(ops, inner.kind, inner.path) < IndexOf(ops, op.kind, op.path),
                   inner << " recorded after " << op);
      }
    }
  }
  ExpectPreImagesOf(s, before, {"single", "top/a.txt", "top/mid/b.bin", "top/mid/deep/c", "top/mid/link"});
  BOOST_TEST(!ws.Exists("top"));
}

BOOST_AUTO_TEST_CASE(MvRenamesOverAnExistingFileAndMovesADirectory) {
  Workspace ws;
  ws.Write("src.txt", "the new version\n", 0600);
  ws.Write("dst.txt", "the version mv replaces\n", 0644);
  ws.Mkdir("dir");
  ws.Write("dir/inside", "inside\n");
  ws.Mkdir("dir/sub");
  ws.Write("dir/sub/deeper", "deeper\n");
  ws.Write("loose", "loose\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // The last step deletes a file that the directory rename moved: its
  // pre-image must be what dir/sub/deeper held.
  GuardResult r = MustRun(ws, "mv src.txt dst.txt && mv dir moved && mv loose moved/sub/ && rm moved/sub/deeper");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kRename, "src.txt", "dst.txt"},
                                 {kRename, "dir", "moved"},
                                 {kRename, "loose", "moved/sub/loose"},
                                 {kDelete, "moved/sub/deeper"}});
  ExpectPreImagesOf(s, before, {"dst.txt", "dir/sub/deeper"});
  BOOST_TEST(ws.Read("dst.txt") == "the new version\n");
}

BOOST_AUTO_TEST_CASE(CpCreatesNewFilesAndCapturesTheFileItOverwrites) {
  Workspace ws;
  ws.Write("src", std::string(70000, 's') + "end\n");
  ws.Write("old", "what cp overwrites\n", 0640);
  ws.Mkdir("dir");
  ws.Write("dir/f", "in dir\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "cp src copy && cp src old && cp -r dir dir2");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kCreate, "copy"},
                                 {kModify, "old"},
                                 {kMkdir, "dir2"},
                                 {kCreate, "dir2/f"}});
  ExpectPreImagesOf(s, before, {"old"});
  BOOST_TEST(ws.Read("old") == ws.Read("src"));
}

BOOST_AUTO_TEST_CASE(LnCreatesSymlinksAndHardLinksAndCapturesTheSymlinkItReplaces) {
  Workspace ws;
  ws.Write("target", "target\n");
  ws.Symlink("old-target", "sym");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // ln -sf over an existing link makes a temporary link and renames it over.
  GuardResult r = MustRun(ws, "ln -s target newsym && ln target hard && ln -sf new-target sym");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kSymlink, "newsym"},
                                 {kLink, "target", "hard"},
                                 {kSymlink, "Cu*"},
                                 {kRename, "Cu*", "sym"}});
  ExpectPreImagesOf(s, before, {"sym"});
}

BOOST_AUTO_TEST_CASE(ChmodRecordsTheModeBeforeTheChange) {
  Workspace ws;
  ws.Write("script", "#!/bin/sh\n", 0644);
  ws.Mkdir("private", 0700);
  ws.Write("private/key", "secret\n", 0600);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "chmod +x script && chmod -R go+rX private");

  ExpectCapture(ws, r, before, {{kChmod, "script"}, {kChmod, "private"}, {kChmod, "private/key"}});
  BOOST_TEST(SnapshotTree(ws.tree()).Find("script")->mode == 0755u);
}

BOOST_AUTO_TEST_CASE(MkdirPCreatesEachMissingLevelAndRmdirRemovesAnEmptyDirectory) {
  Workspace ws;
  ws.Mkdir("a", 0750);
  ws.Mkdir("gone", 0700);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "mkdir -p a/b/c/d && rmdir gone");

  ExpectCapture(ws, r, before, {{kMkdir, "a/b"}, {kMkdir, "a/b/c"}, {kMkdir, "a/b/c/d"}, {kRmdir, "gone"}});
}

BOOST_AUTO_TEST_CASE(TouchCreatesANewFile) {
  Workspace ws;
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "touch new-file");

  ExpectCapture(ws, r, before, {{kCreate, "new-file"}});
  BOOST_TEST(ws.Read("new-file").empty());
}

BOOST_AUTO_TEST_CASE(SedInPlaceCapturesTheFileItReplaces) {
  Workspace ws;
  ws.Write("config.ini", "name = old\nsize = 1\n", 0640);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, "sed -i 's/old/new/' config.ini");

  // sed writes a temporary file beside the original, gives it the
  // original's mode (GNU sed copies the ACL: fsetxattr of
  // system.posix_acl_access, a chmod) and renames it over. The tracer
  // records that chmod; the shim does not record a change of mode through
  // an fd its own O_EXCL creation made (the file has no past: docs/shim.md,
  // "Files the session created"), and the rename's final state has the mode.
  std::vector<Op> ops = {{kCreate, "sed*"}};
  if (!ShimCaptures()) ops.push_back({kChmod, "sed*"});
  ops.push_back({kRename, "sed*", "config.ini"});
  SessionView s = ExpectCapture(ws, r, before, ops);
  ExpectPreImagesOf(s, before, {"config.ini"});
  BOOST_TEST(ws.Read("config.ini") == "name = new\nsize = 1\n");
}

}  // namespace
}  // namespace guard::e2e
