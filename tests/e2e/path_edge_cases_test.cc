// Paths that are easy to get wrong: names holding a newline or bytes that
// are not UTF-8, symlinks in the middle of a path, calls that act on a
// symlink itself, paths that leave the root, calls that fail, and files
// reached through /proc/self/fd and /dev/fd.
#define BOOST_TEST_MODULE path_edge_cases
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/preload_blind.h"

namespace guard::e2e {
namespace {

constexpr OpKind kCreate = OpKind::kCreate, kModify = OpKind::kModify, kRename = OpKind::kRename,
                 kDelete = OpKind::kDelete, kRmdir = OpKind::kRmdir;

GuardResult MustRun(const Workspace& ws, const std::vector<std::string>& command) {
  GuardRun run;
  run.command = command;
  run.env["PYTHONDONTWRITEBYTECODE"] = "1";
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "exit " << r.exit_code << "; stdout:\n" << r.out << "stderr:\n" << r.err);
  return r;
}

GuardResult MustRunBash(const Workspace& ws, const std::string& script) {
  return MustRun(ws, {"bash", "-c", script});
}

BOOST_AUTO_TEST_CASE(NamesWithNewlinesAndInvalidUtf8AreRecordedByteForByte) {
  Workspace ws;
  const std::string newline = "new\nline", latin1 = "caf\xe9", broken = "bad\xff\xfe", tab = "del\ttab";
  ws.Write(newline, "content of a name with a newline\n");
  ws.Write(latin1, "latin-1 name\n", 0600);
  ws.Write(tab, "tab\n");
  ws.Mkdir("dir\n\x01");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRunBash(ws, "printf changed > $'new\\nline' && mv $'caf\\xe9' $'bad\\xff\\xfe' && "
                                  "rm $'del\\ttab' && printf x > $'dir\\n\\x01/in\\x80side'");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, newline},
                                 {kRename, latin1, broken},
                                 {kDelete, tab},
                                 {kCreate, "dir\n\x01/in\x80side"}});
  ExpectPreImagesOf(s, before, {newline, tab});
  BOOST_TEST(ws.Read(broken) == "latin-1 name\n");
}

// /proc ends the name of a deleted directory or file in " (deleted)"; a
// live one may be called that too. The inode tells them apart, never the
// text: before session 19 the shim took every call below such a directory
// for one in a deleted directory (under --mode preload: refused with EPERM).
BOOST_AUTO_TEST_CASE(ADirectoryAndAFileNamedLikeDeletedOnesAreOrdinaryPlaces) {
  Workspace ws;
  ws.Mkdir("build (deleted)");
  ws.Write("build (deleted)/kept", "kept\n");
  ws.Write("build (deleted)/old (deleted)", "old\n", 0644);
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult r = MustRunBash(ws, "cd 'build (deleted)' && printf new > made && chmod 600 made && mv made moved && "
                                  "printf over > kept && exec 3<'old (deleted)' && chmod 640 /dev/fd/3 2>/dev/null "
                                  "|| chmod 640 'old (deleted)'");
  SessionView s = ExpectCapture(ws, r, before,
                                {{kCreate, "build (deleted)/made"},
                                 {OpKind::kChmod, "build (deleted)/made"},
                                 {kRename, "build (deleted)/made", "build (deleted)/moved"},
                                 {kModify, "build (deleted)/kept"},
                                 {OpKind::kChmod, "build (deleted)/old (deleted)"}});
  ExpectPreImagesOf(s, before, {"build (deleted)/kept"});
}

BOOST_AUTO_TEST_CASE(SymlinkedDirectoryInThePathIsRecordedUnderTheRealPath) {
  Workspace ws;
  ws.Mkdir("real");
  ws.Write("real/f", "reached through a relative link\n");
  ws.Write("real/gone", "deleted through an absolute link\n");
  ws.Symlink("real", "rel-link");
  ws.Symlink(ws.Path("real"), "abs-link");
  ws.Mkdir("deep");
  ws.Symlink("../rel-link", "deep/chain");  // a link to a link
  ws.Symlink(ws.outside(), "out-link");     // leads outside the root
  MakeSymlink(ws.Path("real"), ws.outside() + "/into-tree");  // outside, leads in
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRunBash(ws,
                              "echo x > rel-link/f && rm abs-link/gone && echo y > deep/chain/new && "
                              "echo z > out-link/escaped && cd " + ws.outside() + " && echo w > into-tree/w");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "real/f"},
                                 {kDelete, "real/gone"},
                                 {kCreate, "real/new"},
                                 {kCreate, ws.outside() + "/escaped"},
                                 {kCreate, "real/w"}});
  ExpectPreImagesOf(s, before, {"real/f", "real/gone"});
  const Record* escaped = s.FindOp(kCreate, ws.outside() + "/escaped");
  BOOST_REQUIRE(escaped != nullptr);
  BOOST_TEST((escaped->flags & kOutsideRoot) != 0);
}

// "./d/f", "d/./e//f", "./g": the names find and python pass ("./Lib/x.py").
// The shim names their parent without /proc (docs/shim.md), leaving the
// "." and empty components out; ".." still goes the general way. Every call
// must be recorded under the name it reached, and undo give the tree back.
BOOST_AUTO_TEST_CASE(DotAndEmptyComponentsAreRecordedUnderTheNamesTheyReach) {
  Workspace ws;
  ws.Mkdir("d");
  ws.Mkdir("d/e");
  ws.Write("d/e/f", "rewritten through ./d/./e//f\n");
  ws.Write("g", "deleted as ./g\n");
  ws.Write("d/h", "renamed from .//d/h\n");
  ws.Write("d/j", "deleted through d/e/../j\n");
  ws.Write("d/e/k", "replaced by d//e/./k.tmp\n");
  ws.Write("d/e/l", "deleted through ./link/./l\n");
  ws.Symlink("d/e", "link");  // a symlink on the way: the general way names its target
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, {"python3", "-c",
                               "import os\n"
                               "open('./d/./e//f', 'w').write('new f\\n')\n"
                               "os.unlink('./g')\n"
                               "os.rename('.//d/h', 'd/./e/h2')\n"
                               "os.mkdir('./d/./m/')\n"
                               "os.unlink('d/e/../j')\n"
                               "open('d//e/./k.tmp', 'w').write('new k\\n')\n"
                               "os.rename('./d/e/k.tmp', 'd/e/./k')\n"
                               "os.unlink('./link/./l')\n"
                               "os.chdir('d')\n"
                               "open('./e/./n', 'w').write('made from d\\n')\n"});

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, "d/e/f"},
                                 {kDelete, "g"},
                                 {kRename, "d/h", "d/e/h2"},
                                 {OpKind::kMkdir, "d/m"},
                                 {kDelete, "d/j"},
                                 {kCreate, "d/e/k.tmp"},
                                 {kRename, "d/e/k.tmp", "d/e/k"},
                                 {kDelete, "d/e/l"},
                                 {kCreate, "d/e/n"}});
  ExpectPreImagesOf(s, before, {"d/e/f", "g", "d/j", "d/e/k", "d/e/l"});
  UndoGivesBack(ws, r, before, 120);
}

// A rename or a link whose two names share their dirname (and dirfd) has
// the shim resolve that directory once for both (docs/shim.md); names in
// two directories, or under two dirfds, resolve each their own.
BOOST_AUTO_TEST_CASE(RenamesAndLinksWithinOneDirectoryAreRecordedUnderBothNames) {
  Workspace ws;
  ws.Mkdir("d");
  ws.Mkdir("d/sub");
  ws.Mkdir("e");
  ws.Write("d/a", "renamed within d\n");
  ws.Write("d/b", "replaced by d/a\n");
  ws.Write("d/c", "linked within d\n");
  ws.Write("d/x", "moved to e\n");
  ws.Write("top", "renamed in the cwd\n");
  ws.Write("e/y", "renamed by dirfds\n");
  ws.Write("e/z", "renamed by one dirfd\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRun(ws, {"python3", "-c",
                               "import os\n"
                               "os.rename('d/a', 'd/b')\n"
                               "os.link('d/c', 'd/c2')\n"
                               "os.rename('d/sub', 'd/sub2/')\n"
                               "os.rename('d/x', 'e/x')\n"
                               "os.rename('top', 'top2')\n"
                               "e1 = os.open('e', os.O_RDONLY | os.O_DIRECTORY)\n"
                               "e2 = os.open('e', os.O_RDONLY | os.O_DIRECTORY)\n"
                               "os.rename('y', 'y2', src_dir_fd=e1, dst_dir_fd=e2)\n"
                               "os.rename('z', 'z2', src_dir_fd=e1, dst_dir_fd=e1)\n"});

  SessionView s = ExpectCapture(ws, r, before,
                                {{kRename, "d/a", "d/b"},
                                 {OpKind::kLink, "d/c", "d/c2"},
                                 {kRename, "d/sub", "d/sub2"},
                                 {kRename, "d/x", "e/x"},
                                 {kRename, "top", "top2"},
                                 {kRename, "e/y", "e/y2"},
                                 {kRename, "e/z", "e/z2"}});
  ExpectPreImagesOf(s, before, {"d/b"});
  UndoGivesBack(ws, r, before, 120);
}

BOOST_AUTO_TEST_CASE(CallsOnASymlinkItselfRecordTheLinkAndLeaveTheTargetAlone) {
  Workspace ws;
  ws.Write("target.txt", "the target\n");
  ws.Symlink("target.txt", "to-rename");
  ws.Symlink("target.txt", "to-delete");
  ws.Symlink("target.txt", "nofollow");
  ws.Symlink("missing-target", "dangling");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // O_NOFOLLOW on a symlink fails with ELOOP and changes nothing; rename and
  // unlink act on the link; an open that follows writes the target, and one
  // through a dangling link creates the target.
  GuardResult r = MustRun(ws, {"/usr/bin/python3", "-c", R"(
import errno, os
try:
    os.open("nofollow", os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    raise SystemExit("O_NOFOLLOW opened a symlink")
except OSError as e:
    assert e.errno == errno.ELOOP, e
os.rename("to-rename", "renamed-link")
os.unlink("to-delete")
with open("renamed-link", "w") as f:
    f.write("written through the link\n")
with open("dangling", "w") as f:
    f.write("created through a dangling link\n")
)"});

  SessionView s = ExpectCapture(ws, r, before,
                                {{kRename, "to-rename", "renamed-link"},
                                 {kDelete, "to-delete"},
                                 {kModify, "target.txt"},
                                 {kCreate, "missing-target"}});
  ExpectPreImagesOf(s, before, {"to-rename", "to-delete", "target.txt"});
  const Record* del = s.FindOp(kDelete, "to-delete");
  BOOST_REQUIRE(del != nullptr);
  BOOST_TEST(FileTypeName(del->before.type) == FileTypeName(FileType::kSymlink));
  BOOST_TEST(del->before.symlink_target == "target.txt");
  BOOST_TEST(ws.Read("nofollow") == "written through the link\n");  // follows to target.txt
}

BOOST_AUTO_TEST_CASE(PathsOutsideTheRootAreRecordedByNameWithoutPreImage, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Workspace ws;
  const std::string out = ws.outside();
  WriteFile(out + "/existing", "outside content guard must not copy\n");
  WriteFile(out + "/old", "deleted outside\n");
  WriteFile(out + "/incoming", "moves into the root\n");
  ws.Write("leaving", "moves out of the root: its content must be kept\n", 0600);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRunBash(ws, "O=" + out +
                                      "; echo x > $O/existing && echo n > $O/new && rm $O/old && "
                                      "mv $O/incoming arrived && mv leaving $O/left");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kModify, out + "/existing"},
                                 {kCreate, out + "/new"},
                                 {kDelete, out + "/old"},
                                 {kRename, out + "/incoming", "arrived"},
                                 {kRename, "leaving", out + "/left"}});
  for (const Record* op : s.Operations()) {
    bool first_outside = op->path.compare(0, out.size(), out) == 0;
    bool second_outside = op->path2.compare(0, out.size(), out) == 0;
    BOOST_TEST(((op->flags & kOutsideRoot) != 0) == first_outside, "op " << op->seq);
    BOOST_TEST(((op->flags & kOutsideRoot2) != 0) == second_outside, "op " << op->seq);
    if (first_outside && op->kind != kCreate) {
      BOOST_TEST(FileTypeName(op->before.type) == FileTypeName(FileType::kUnknown), "op " << op->seq);
    }
    // The outcome describes where the call left something: path2 for a
    // rename, else path; outside the root guard does not look there either.
    const Record* outcome = s.OutcomeOf(op->seq);
    BOOST_REQUIRE(outcome != nullptr);
    bool after_outside = op->kind == kRename ? second_outside : first_outside;
    if (after_outside) {
      BOOST_TEST(FileTypeName(outcome->after.type) == FileTypeName(FileType::kUnknown),
                 "outcome of op " << op->seq << ": " << FileTypeName(outcome->after.type));
    } else {
      BOOST_TEST(FileTypeName(outcome->after.type) == FileTypeName(FileType::kRegular),
                 "outcome of op " << op->seq << ": " << FileTypeName(outcome->after.type));
    }
  }
  // What leaves the root is gone from the tree: its content is kept.
  ExpectPreImagesOf(s, before, {"leaving"});
}

// A directory renamed out of the root takes every file below it along. The
// rename record names only the directory (a directory has no content of its
// own), so guard records, just before it, the removal of everything below
// it, flagged kCarried, with the files' content: once they are deleted out
// there (recorded by name only) they can still be restored.
BOOST_AUTO_TEST_CASE(DirectoryMovedOutOfTheRootKeepsTheContentOfItsFiles, GUARD_PRELOAD_BLIND("a rename across the root edge")) {
  Workspace ws;
  ws.Mkdir("project");
  ws.Write("project/a.txt", "file directly in the moved directory\n");
  ws.Mkdir("project/sub");
  ws.Write("project/sub/b.txt", "file deeper in the moved directory\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  const std::string out = ws.outside();

  GuardResult r = MustRunBash(ws, "mv project " + out + "/trash && rm -rf " + out + "/trash");

  SessionView s = ExpectCapture(ws, r, before,
                                {{kDelete, "project/a.txt"},
                                 {kDelete, "project/sub/b.txt"},
                                 {kRmdir, "project/sub"},
                                 {kRename, "project", out + "/trash"},
                                 {kDelete, out + "/trash/a.txt"},
                                 {kDelete, out + "/trash/sub/b.txt"},
                                 {kRmdir, out + "/trash/sub"},
                                 {kRmdir, out + "/trash"}},
                                /*ordered=*/false);
  ExpectPreImagesOf(s, before, {"project/a.txt", "project/sub/b.txt"});
  const Record* rename = s.FindOp(kRename, "project");
  BOOST_REQUIRE(rename != nullptr);
  for (const Record* op : s.Operations()) {
    if (op->path.rfind("project/", 0) != 0) continue;
    BOOST_TEST((op->flags & kCarried) != 0, "op " << op->seq << " is not flagged kCarried");
    BOOST_TEST(op->seq < rename->seq, "op " << op->seq << " comes after the rename");
  }
}

// CAPTURE GAP (reported): a file of the root that also has a hard link
// outside it changes when written through the outside name; guard sees only
// the outside path and records it by name, so the file in the root changes
// without a pre-image (pnpm's store, for one, hard-links package files into
// node_modules). Closing it needs a policy for outside paths whose inode has
// other links; enable once guard has one.
BOOST_AUTO_TEST_CASE(FileChangedThroughAHardLinkOutsideTheRootKeepsItsPreImage, *boost::unit_test::disabled()) {
  Workspace ws;
  ws.Write("shared.js", "module.exports = 1;\n");
  BOOST_REQUIRE_EQUAL(link(ws.Path("shared.js").c_str(), (ws.outside() + "/store-copy.js").c_str()), 0);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRunBash(ws, "echo 'module.exports = 2;' > " + ws.outside() + "/store-copy.js");

  BOOST_TEST(ws.Read("shared.js") == "module.exports = 2;\n");
  SessionView s = OnlyNewSession(ws, r);
  ExpectPreImagesOf(s, before, {"shared.js"});
}

// Makes `top` and, below it, `levels` directories with names of `name_len`
// bytes, and a file in the deepest one; returns the file's relative path.
// Built with *at() calls: its absolute path is longer than PATH_MAX.
std::string MakeDeepTree(const Workspace& ws, const std::string& top, int levels, size_t name_len) {
  ws.Mkdir(top);
  std::string rel = top, name(name_len, 'd');
  int fd = open(ws.Path(top).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  BOOST_REQUIRE(fd >= 0);
  for (int i = 0; i < levels; ++i) {
    BOOST_REQUIRE_EQUAL(mkdirat(fd, name.c_str(), 0755), 0);
    int sub = openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(fd);
    BOOST_REQUIRE(sub >= 0);
    fd = sub;
    rel += "/" + name;
  }
  int file = openat(fd, "leaf.txt", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  close(fd);
  BOOST_REQUIRE(file >= 0);
  BOOST_REQUIRE_EQUAL(write(file, "deep content\n", 13), 13);
  close(file);
  return rel + "/leaf.txt";
}

BOOST_AUTO_TEST_CASE(ChangesBeyondPathMaxAreRefusedRatherThanMadeUnrecorded) {
  // guard names files by absolute path. Where that is longer than PATH_MAX
  // (the program works relative to directory fds, as rm -rf does) guard
  // cannot save the file, so the change must fail, never pass unrecorded.
  Workspace ws;
  std::string leaf = MakeDeepTree(ws, "deep", 25, 200);
  BOOST_REQUIRE_GT(ws.Path(leaf).size(), static_cast<size_t>(PATH_MAX));
  ws.Write("shallow", "an ordinary file\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {"bash", "-c", "rm -rf deep; status=$?; rm shallow; exit $status"};
  GuardResult r = RunGuard(ws, run);

  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err.find("File name too long") != std::string::npos, r.err);
  ExpectCapture(ws, r, before, {{kDelete, "shallow"}});
  BOOST_TEST(DiffSnapshots(before.Without("shallow"), SnapshotTree(ws.tree())).empty());
}

// CAPTURE GAP (reported): the ideal for the case above: capture the deep
// tree like any other. Needs guard to capture relative to directory fds
// (/proc/TID/fd/N opened as a directory) instead of by absolute path, and
// the store to read files that way: beyond a minimal fix.
BOOST_AUTO_TEST_CASE(DeepTreeBeyondPathMaxIsCaptured, *boost::unit_test::disabled()) {
  Workspace ws;
  std::string leaf = MakeDeepTree(ws, "deep", 25, 200);
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardResult r = MustRunBash(ws, "rm -rf deep");

  std::vector<Op> expected = {{kDelete, leaf}};
  for (std::string dir = leaf.substr(0, leaf.rfind('/')); !dir.empty();) {
    expected.push_back({kRmdir, dir});
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "" : dir.substr(0, slash);
  }
  SessionView s = ExpectCapture(ws, r, before, expected);
  ExpectPreImagesOf(s, before, {leaf});
}

BOOST_AUTO_TEST_CASE(FailedCallsAreRecordedWithTheirErrorAndNotAsChanges) {
  Workspace ws;
  ws.Mkdir("full");
  ws.Write("full/keep", "keeps the directory non-empty\n");
  ws.Mkdir("src-dir");
  ws.Write("src-dir/a", "a\n");
  ws.Mkdir("dst-dir");
  ws.Write("dst-dir/b", "b\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  GuardRun run;
  run.command = {"bash", "-c", "rmdir full; mv -T src-dir dst-dir; rm missing; mkdir full; exit 0"};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);

  SessionView s = ExpectCapture(ws, r, before, {});
  BOOST_TEST(DiffSnapshots(before, SnapshotTree(ws.tree())).empty());
  // Calls that could have changed something are recorded before they run,
  // so they are in the journal, with the error they returned.
  const Record* rmdir = s.FindOp(kRmdir, "full");
  BOOST_REQUIRE(rmdir != nullptr);
  const Record* rmdir_outcome = s.OutcomeOf(rmdir->seq);
  BOOST_REQUIRE(rmdir_outcome != nullptr);
  BOOST_TEST(rmdir_outcome->result_errno == ENOTEMPTY);
  const Record* mv = s.FindOp(kRename, "src-dir");
  BOOST_REQUIRE(mv != nullptr);
  const Record* mv_outcome = s.OutcomeOf(mv->seq);
  BOOST_REQUIRE(mv_outcome != nullptr);
  BOOST_TEST((mv_outcome->result_errno == ENOTEMPTY || mv_outcome->result_errno == EEXIST));
  BOOST_TEST(s.meta().files == 0u);
}

BOOST_AUTO_TEST_CASE(WritesThroughProcSelfFdAndDevFdAreCapturedUnderTheRealPath) {
  Workspace ws;
  ws.Write("via-proc", "reopened through /proc/self/fd\n");
  ws.Write("via-dev-fd", "reopened through /dev/fd\n");
  ws.Write("via-bash", "truncated by a bash redirection to /dev/fd/7\n");
  TreeSnapshot before = SnapshotTree(ws.tree());

  // A read-only fd reopened for writing through its /proc link: the kernel
  // resolves /proc/self (and /dev/fd -> /proc/self/fd) in the writer, so
  // guard must too, not in itself.
  GuardResult r = MustRunBash(ws, R"(/usr/bin/python3 -c '
import os
fd = os.open("via-proc", os.O_RDONLY)
open("/proc/self/fd/%d" % fd, "w").write("new\n")
fd = os.open("via-dev-fd", os.O_RDONLY)
open("/dev/fd/%d" % fd, "w").write("new\n")
' && exec 7<via-bash && echo new > /dev/fd/7)");

  SessionView s = ExpectCapture(ws, r, before, {{kModify, "via-proc"}, {kModify, "via-dev-fd"}, {kModify, "via-bash"}});
  ExpectPreImagesOf(s, before, {"via-proc", "via-dev-fd", "via-bash"});
}

}  // namespace
}  // namespace guard::e2e
