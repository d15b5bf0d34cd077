// Changes made through an open file rather than through its name (issue 11,
// items 1, 10 and 11): each session is undone (the tree before it, byte for
// byte and mode for mode), replayed (the tree at its end) and undone again.
// The calls are made by tests/programs/fd_tricks.c.
#define BOOST_TEST_MODULE fd_capture
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/e2e/support/undone_session.h"
#include "tests/e2e/support/preload_blind.h"
#include "tests/e2e/support/session_mode.h"

namespace guard::e2e {
namespace {

constexpr const char* kOriginal = "the user's work, which must survive\n";

std::vector<std::string> Tricks(std::vector<std::string> args) {
  args.insert(args.begin(), TestProgram("fd_tricks"));
  return args;
}

// ---------------------------------------------------------------------------
// Item 11: "deleted" is decided from the inode, not from the link's text.

BOOST_AUTO_TEST_CASE(FchmodOfAFileNamedLikeADeletedOneIsRecorded) {
  Workspace ws;
  ws.Write("notes (deleted)", kOriginal, 0644);
  UndoneSession s(ws, Tricks({"fchmod", "notes (deleted)", "600"}));
  BOOST_TEST(s.View().FindOp(OpKind::kChmod, "notes (deleted)") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// ---------------------------------------------------------------------------
// A file the session created has no past: the shim records no change of its
// mode or owner made through the fd of its creation (docs/shim.md, "Files
// the session created"); the tracer records it. Either way undo removes the
// file and replay gives it its last mode.

BOOST_AUTO_TEST_CASE(AModeChangeOfAFileTheSessionCreatedIsUndoneAndReplayed) {
  Workspace ws;
  ws.Write("keep", kOriginal, 0644);
  UndoneSession s(ws, Tricks({"created", "made", "new content\n", "750"}));
  const bool recorded = s.View().FindOp(OpKind::kChmod, "made") != nullptr;
  BOOST_TEST(recorded == !ShimCaptures(), s.View().Dump());
  BOOST_TEST(s.View().FindOp(OpKind::kCreate, "made") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// The mark that says "created" outlives its fd when the host closes it by a
// raw system call; the fd number then names another file, whose chmod must
// be recorded (the shim checks the inode, not only the mark).
BOOST_AUTO_TEST_CASE(AStaleCreatedMarkDoesNotHideAChmodOfAnotherFile) {
  Workspace ws;
  ws.Write("old", kOriginal, 0644);
  UndoneSession s(ws, Tricks({"stale-created", "made", "old", "600"}));
  BOOST_TEST(s.View().FindOp(OpKind::kChmod, "old") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// The created inode keeps its "no past" under any name: renamed over a file
// that has one, or exchanged with it, its mode change through the fd is
// still a change of the new inode; the file it replaced is restored whole.
BOOST_AUTO_TEST_CASE(AFileTheSessionCreatedRenamedOverAnotherThenFchmodded) {
  for (const char* mode : {"750", "x750"}) {
    Workspace ws;
    ws.Write("old", kOriginal, 0644);
    UndoneSession s(ws, Tricks({"created-over", "made", "old", mode}));
    s.ExpectUndoReplayUndo();
  }
}

// A CREATED mark left by close_range (not interposed), its number reused by
// a read-only open through libc (which the fast path leaves unmarked): the
// chmod is of a file with a past.
BOOST_AUTO_TEST_CASE(ACreatedMarkLeftByCloseRangeDoesNotHideAChmodOfAnotherFile) {
  Workspace ws;
  ws.Write("old", kOriginal, 0644);
  UndoneSession s(ws, Tricks({"created-closed", "made", "old", "600"}));
  BOOST_TEST(s.View().FindOp(OpKind::kChmod, "old") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// A vfork child reads (and, closing, clears) its parent's marks: its chmod
// of another file through the parent's created fd number is recorded, and
// the parent's own chmod of the created file is undone with it.
BOOST_AUTO_TEST_CASE(AVforkChildsChmodThroughItsParentsCreatedFdNumberIsRecorded) {
  Workspace ws;
  ws.Write("old", kOriginal, 0644);
  UndoneSession s(ws, Tricks({"created-vfork", "made", "old", "600"}));
  BOOST_TEST(s.View().FindOp(OpKind::kChmod, "old") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// ---------------------------------------------------------------------------
// Item 1: a file deleted while open is adopted into the store; nothing a
// process of the session can still do through its fd may change that copy.

BOOST_AUTO_TEST_CASE(WriteThroughAnFdHeldAcrossTheDeleteLeavesThePreImage) {
  Workspace ws;
  ws.Write("held", kOriginal, 0640);
  UndoneSession s(ws, Tricks({"write-held", "held", "rewritten after the delete\n"}));
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(ReopenOfADeletedFileThroughProcSelfFdLeavesThePreImage, GUARD_PRELOAD_BLIND("a file reached by its fd after its name was deleted")) {
  Workspace ws;
  ws.Write("held", kOriginal, 0640);
  UndoneSession s(ws, Tricks({"reopen", "held", "rewritten through /proc/self/fd\n"}));
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(ReopenOfADeletedFileThroughAnOPathFdLeavesThePreImage, GUARD_PRELOAD_BLIND("a file reached by its fd after its name was deleted")) {
  Workspace ws;
  ws.Write("held", kOriginal, 0640);
  UndoneSession s(ws, Tricks({"reopen-opath", "held", "rewritten through an O_PATH fd\n"}));
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(ReopenOfADeletedFileThroughAnotherProcessFdLeavesThePreImage, GUARD_PRELOAD_BLIND("a file reached by its fd after its name was deleted")) {
  Workspace ws;
  ws.Write("held", kOriginal, 0640);
  UndoneSession s(ws, Tricks({"reopen-other", "held", "rewritten through /proc/PPID/fd\n"}));
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(ReopenOfADeletedNameOfAHardLinkedFileRecordsTheOtherName, GUARD_PRELOAD_BLIND("a file reached by its fd after its name was deleted")) {
  // The inode keeps a name in the tree: writing it through the deleted
  // name's fd changes that name, which undo must put back.
  Workspace ws;
  ws.Write("a", kOriginal, 0640);
  BOOST_REQUIRE(link(ws.Path("a").c_str(), ws.Path("b").c_str()) == 0);
  UndoneSession s(ws, Tricks({"reopen", "a", "rewritten through the deleted name\n"}));
  BOOST_TEST(s.View().FindOp(OpKind::kModify, "b") != nullptr, s.View().Dump());
  // Undo gives back both names with the content (not the inode: two files).
  s.Expect({"undo", "--yes", "--session", s.id()}, s.before());
}

// ---------------------------------------------------------------------------
// Item 10: an O_TMPFILE file given a name is a creation.

BOOST_AUTO_TEST_CASE(TmpfileLinkedWithEmptyPathIsACreation, GUARD_PRELOAD_BLIND("linkat with AT_EMPTY_PATH")) {
  Workspace ws;
  ws.Mkdir("d");
  UndoneSession s(ws, Tricks({"tmpfile", "d", "new", "made anonymous, then named\n", "empty-path"}));
  BOOST_TEST(s.View().FindOp(OpKind::kCreate, "d/new") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(TmpfileLinkedThroughProcSelfFdIsACreation, GUARD_PRELOAD_BLIND("linkat of an O_TMPFILE file through /proc/self/fd")) {
  Workspace ws;
  ws.Mkdir("d");
  UndoneSession s(ws, Tricks({"tmpfile", "d", "new", "made anonymous, then named\n", "proc"}));
  BOOST_TEST(s.View().FindOp(OpKind::kCreate, "d/new") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// The same from a mount namespace of the process's own (`unshare -m`, as a
// sandbox makes): the /proc/self/fd name is no name of guard's, and the
// file it stands for must still be named by its inode, under the root.
BOOST_AUTO_TEST_CASE(TmpfileLinkedThroughProcSelfFdInAMountNamespaceOfItsOwnIsACreation, GUARD_PRELOAD_BLIND("linkat of an O_TMPFILE file through /proc/self/fd")) {
  if (geteuid() != 0 || RunProcess({{"unshare", "-m", "true"}}).exit_code != 0) {
    BOOST_TEST_MESSAGE("SKIPPED: unshare -m needs root and mount namespaces");
    BOOST_WARN_MESSAGE(false, "skipped: no mount namespace here");
    return;
  }
  Workspace ws;
  ws.Mkdir("d");
  std::vector<std::string> command = Tricks({"tmpfile", "d", "new", "made anonymous, then named\n", "proc"});
  command.insert(command.begin(), {"unshare", "-m"});
  UndoneSession s(ws, command);
  BOOST_TEST(s.View().FindOp(OpKind::kCreate, "d/new") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(TmpfileLinkedThenRenamedOverAFileLeavesNoFileAtTheTemporaryName, GUARD_PRELOAD_BLIND("linkat of an O_TMPFILE file through /proc/self/fd")) {
  // The way atomic writers use O_TMPFILE: name it, rename it over the file.
  Workspace ws;
  ws.Write("config", kOriginal, 0600);
  std::string rename = "mv .config.tmp config";
  UndoneSession s(ws, {"bash", "-c",
                 TestProgram("fd_tricks") + " tmpfile . .config.tmp 'the new config\n' proc && " + rename});
  s.ExpectUndoReplayUndo();
}

}  // namespace
}  // namespace guard::e2e
