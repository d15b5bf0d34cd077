// PlanRestore and ApplyRestore (supervisor/restore/restore.h) on histories
// built from records (tests/unit/support/test_history.h) and a real
// temporary tree holding what the session left: which paths an undo or a
// replay changes and into what, which it leaves alone and why, and what
// the tree holds afterwards.
#define BOOST_TEST_MODULE restore_plan
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "supervisor/restore/restore.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using testing::HistoryBuilder;
using testing::TempDir;

// A session's records, its store, and the tree it protects.
struct Session {
  TempDir tmp;
  HistoryBuilder b{tmp.path + "/store"};
  std::string root = tmp.path + "/tree";

  Session() { BOOST_REQUIRE(fs::create_directory(root)); }

  // Puts `content` at `rel` in the tree with exactly `mode`.
  void Write(const std::string& rel, const std::string& content, uint32_t mode = 0644) {
    std::ofstream(root + "/" + rel, std::ios::binary | std::ios::trunc) << content;
    BOOST_REQUIRE(chmod((root + "/" + rel).c_str(), mode) == 0);
  }
  void Mkdir(const std::string& rel, uint32_t mode = 0755) {
    BOOST_REQUIRE(fs::create_directory(root + "/" + rel));
    BOOST_REQUIRE(chmod((root + "/" + rel).c_str(), mode) == 0);
  }
  bool Exists(const std::string& rel) const {
    std::error_code ec;
    return fs::symlink_status(root + "/" + rel, ec).type() != fs::file_type::not_found;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  uint32_t Mode(const std::string& rel) const {
    struct stat st;
    BOOST_REQUIRE(lstat((root + "/" + rel).c_str(), &st) == 0);
    return st.st_mode & 07777;
  }

  RestorePlan Plan(RestoreDirection direction, uint64_t to_seq = 0) {
    SafeTree tree;
    BOOST_REQUIRE(SafeTree::Open(root, &tree).ok());
    RestoreRequest request;
    request.direction = direction;
    request.to_seq = to_seq;
    RestorePlan plan;
    Status s = PlanRestore(b.Build(), tree, *b.store(), request, &plan);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    return plan;
  }
  // Plans and applies; the restore must change something and fail nowhere.
  RestorePlan Restore(RestoreDirection direction, uint64_t to_seq = 0) {
    RestorePlan plan = Plan(direction, to_seq);
    SafeTree tree;
    BOOST_REQUIRE(SafeTree::Open(root, &tree).ok());
    RestoreResult result;
    Status s = ApplyRestore(plan, *b.store(), &tree, &result);
    BOOST_TEST(s.ok(), s.ToString());
    BOOST_TEST(result.failed.empty(), (result.failed.empty() ? "" : result.failed[0]));
    BOOST_TEST(result.changed == plan.changes.size());
    return plan;
  }
};

const RestoreItem* Change(const RestorePlan& plan, const std::string& path) {
  for (const RestoreItem& c : plan.changes) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

std::string Describe(const RestorePlan& plan, const std::string& path) {
  const RestoreItem* c = Change(plan, path);
  return c == nullptr ? "(no change)" : DescribeChange(*c);
}

bool Unknown(const RestorePlan& plan, const std::string& prefix, const std::string& why) {
  for (const std::string& u : plan.unknown) {
    if (u.rfind(prefix + ":", 0) == 0 && u.find(why) != std::string::npos) return true;
  }
  return false;
}

BOOST_AUTO_TEST_CASE(UndoRemovesACreatedFileAndReplayBringsItBack) {
  Session s;
  s.b.Op(OpKind::kCreate, "new", HistoryBuilder::Absent());
  s.b.Final("new", s.b.File("made by the session\n"));
  s.Write("new", "made by the session\n");

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(undo.changes.size() == 1u);
  BOOST_TEST(Describe(undo, "new") == "remove");
  BOOST_TEST(undo.conflicts() == 0u);
  BOOST_TEST(!s.Exists("new"));

  RestorePlan replay = s.Restore(RestoreDirection::kReplay);
  BOOST_TEST(Describe(replay, "new") == "create");
  BOOST_TEST(s.Read("new") == "made by the session\n");
}

BOOST_AUTO_TEST_CASE(UndoRestoresTheContentAndModeOfAModifiedFile) {
  Session s;
  s.b.Op(OpKind::kModify, "a", s.b.File("before\n", 0600));
  s.b.Final("a", s.b.File("after, and longer\n", 0644));
  s.Write("a", "after, and longer\n", 0644);

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(Describe(undo, "a") == "restore");
  BOOST_TEST(s.Read("a") == "before\n");
  BOOST_TEST(s.Mode("a") == 0600u);

  s.Restore(RestoreDirection::kReplay);
  BOOST_TEST(s.Read("a") == "after, and longer\n");
  BOOST_TEST(s.Mode("a") == 0644u);
}

BOOST_AUTO_TEST_CASE(UndoRecreatesADeletedFile) {
  Session s;
  s.b.Op(OpKind::kDelete, "gone", s.b.File("precious\n", 0640));
  s.b.Final("gone", HistoryBuilder::Absent());

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(Describe(undo, "gone") == "create");
  BOOST_TEST(s.Read("gone") == "precious\n");
  BOOST_TEST(s.Mode("gone") == 0640u);
  s.Restore(RestoreDirection::kReplay);
  BOOST_TEST(!s.Exists("gone"));
}

// The source's content is not in its record (it moved, it was not
// destroyed): undo follows it to the destination's final state.
BOOST_AUTO_TEST_CASE(UndoRestoresBothNamesOfARenameOver) {
  Session s;
  const std::string moved = "the source's content\n";
  s.b.Op(OpKind::kRename, "src", HistoryBuilder::Meta(0644, moved.size()), "dst", s.b.File("replaced\n"));
  s.b.Final("src", HistoryBuilder::Absent());
  s.b.Final("dst", s.b.File(moved));
  s.Write("dst", moved);

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(Describe(undo, "src") == "create");
  BOOST_TEST(Describe(undo, "dst") == "restore");
  BOOST_TEST(s.Read("src") == moved);
  BOOST_TEST(s.Read("dst") == "replaced\n");

  s.Restore(RestoreDirection::kReplay);
  BOOST_TEST(!s.Exists("src"));
  BOOST_TEST(s.Read("dst") == moved);
}

// A moved directory is rebuilt under its old name from the saved copies,
// with the state its files had then, not renamed back.
BOOST_AUTO_TEST_CASE(UndoOfADirectoryMoveRebuildsItUnderItsOldName) {
  Session s;
  s.b.Op(OpKind::kRename, "d", HistoryBuilder::Dir(0750), "e", HistoryBuilder::Absent());
  s.b.Op(OpKind::kModify, "e/f", s.b.File("f before\n"));
  s.b.Op(OpKind::kCreate, "e/sub/new", HistoryBuilder::Absent());
  s.b.Final("d", HistoryBuilder::Absent());
  s.b.Final("e", HistoryBuilder::Dir(0750));
  s.b.Final("e/f", s.b.File("f after\n"));
  s.b.Final("e/sub", HistoryBuilder::Dir());
  s.b.Final("e/sub/new", s.b.File("new\n"));
  s.Mkdir("e", 0750);
  s.Write("e/f", "f after\n");
  s.Mkdir("e/sub");
  s.Write("e/sub/new", "new\n");

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(Describe(undo, "d") == "create directory");
  BOOST_TEST(Describe(undo, "d/f") == "create");
  BOOST_TEST(Describe(undo, "e") == "remove");
  BOOST_TEST(undo.conflicts() == 0u);
  BOOST_TEST(!s.Exists("e"));
  BOOST_TEST(s.Mode("d") == 0750u);
  BOOST_TEST(s.Read("d/f") == "f before\n");
  BOOST_TEST(s.Exists("d/sub"));  // it was there before the move
  BOOST_TEST(!s.Exists("d/sub/new"));

  s.Restore(RestoreDirection::kReplay);
  BOOST_TEST(!s.Exists("d"));
  BOOST_TEST(s.Read("e/f") == "f after\n");
  BOOST_TEST(s.Read("e/sub/new") == "new\n");
}

// What the tree holds now is neither what the session left nor the target:
// someone changed it since. The plan says so; it is the caller's to decide.
BOOST_AUTO_TEST_CASE(AFileChangedSinceTheSessionIsAConflict) {
  Session s;
  s.b.Op(OpKind::kModify, "a", s.b.File("before\n"));
  s.b.Final("a", s.b.File("after\n"));
  s.b.Op(OpKind::kModify, "b", s.b.File("b before\n"));
  s.b.Final("b", s.b.File("b after\n"));
  s.Write("a", "edited by hand since\n");
  s.Write("b", "b after\n");
  // Saved in the store, so that only the conflict keeps a from the plan.
  BlobKey edited;
  BOOST_REQUIRE(s.b.store()->PutBytes("edited by hand since\n", &edited).ok());

  RestorePlan undo = s.Plan(RestoreDirection::kUndo);
  BOOST_REQUIRE(Change(undo, "a") != nullptr);
  BOOST_TEST(Change(undo, "a")->conflict);
  BOOST_TEST((Change(undo, "a")->current.type == FileType::kRegular));
  BOOST_REQUIRE(Change(undo, "b") != nullptr);
  BOOST_TEST(!Change(undo, "b")->conflict);
  BOOST_TEST(undo.conflicts() == 1u);
}

// Removing a directory the session made would destroy what someone put
// in it since, which no record names.
BOOST_AUTO_TEST_CASE(ADirectoryHoldingAnEntryTheSessionNeverHadIsAConflict) {
  Session s;
  s.b.Op(OpKind::kMkdir, "dir", HistoryBuilder::Absent());
  s.b.Final("dir", HistoryBuilder::Dir());
  s.Mkdir("dir");
  s.Write("dir/stranger", "not the session's\n");

  RestorePlan undo = s.Plan(RestoreDirection::kUndo);
  const RestoreItem* c = Change(undo, "dir");
  BOOST_REQUIRE(c != nullptr);
  BOOST_TEST(c->conflict);
  BOOST_TEST(c->why.find("dir/stranger") != std::string::npos, c->why);
}

// Without the content to write, a path is left as it is and named.
BOOST_AUTO_TEST_CASE(APathWhoseContentIsNotInTheStoreIsLeftAsItIs) {
  Session s;
  FileState lost = HistoryBuilder::Meta(0644, 9);
  lost.blob.kind = BlobRef::Kind::kKey;
  lost.blob.key = BlobKey::OfBytes("never put\n");
  s.b.Op(OpKind::kModify, "missing-blob", lost);
  s.b.Final("missing-blob", s.b.File("now\n"));
  s.b.Op(OpKind::kModify, "uncaptured", HistoryBuilder::Meta(0644, 5));
  s.b.Final("uncaptured", s.b.File("now\n"));
  s.b.Op(OpKind::kModify, "fine", s.b.File("then\n"));
  s.b.Final("fine", s.b.File("now\n"));
  for (const char* p : {"missing-blob", "uncaptured", "fine"}) s.Write(p, "now\n");

  RestorePlan undo = s.Restore(RestoreDirection::kUndo);
  BOOST_TEST(Change(undo, "missing-blob") == nullptr);
  BOOST_TEST(Unknown(undo, "missing-blob", "is missing from the store"));
  BOOST_TEST(Unknown(undo, "missing-blob", lost.blob.key.Hex()));
  BOOST_TEST(Change(undo, "uncaptured") == nullptr);
  BOOST_TEST(Unknown(undo, "uncaptured", "its content was not captured"));
  BOOST_TEST(s.Read("missing-blob") == "now\n");
  BOOST_TEST(s.Read("uncaptured") == "now\n");
  BOOST_TEST(s.Read("fine") == "then\n");
}

// What a change would destroy must be saved somewhere. A file whose present
// content is in no record (and not in the store), written over with a
// content the store has, is restored: the restore runs under guard, which
// saves what it overwrites as a pre-image of the restore session first
// (issue 11, item 8); the plan says so in a note.
BOOST_AUTO_TEST_CASE(AFileHoldingContentSavedNowhereIsRestoredWithANote) {
  Session s;
  s.b.Op(OpKind::kModify, "a", s.b.File("before\n"));
  s.b.Final("a", HistoryBuilder::Meta(0644, 6));  // the final content was not captured
  s.Write("a", "after\n");

  RestorePlan undo = s.Plan(RestoreDirection::kUndo);
  BOOST_TEST(Change(undo, "a") != nullptr);
  bool noted = false;
  for (const std::string& n : undo.notes) noted = noted || n.find("was not in the store") != std::string::npos;
  BOOST_TEST(noted);
}

BOOST_AUTO_TEST_CASE(UndoToAnOperationStopsJustBeforeIt) {
  Session s;
  uint64_t first = s.b.Op(OpKind::kModify, "a", s.b.File("v0\n"));
  uint64_t second = s.b.Op(OpKind::kModify, "a", s.b.File("v1\n"));
  uint64_t third = s.b.Op(OpKind::kCreate, "b", HistoryBuilder::Absent());
  s.b.Final("a", s.b.File("v2\n"));
  s.b.Final("b", s.b.File("b\n"));
  s.Write("a", "v2\n");
  s.Write("b", "b\n");

  RestorePlan to_third = s.Plan(RestoreDirection::kUndo, third);
  BOOST_TEST(to_third.boundary == third - 1);
  BOOST_TEST(Describe(to_third, "b") == "remove");
  BOOST_TEST(Change(to_third, "a") == nullptr);  // a already holds what it held before op 3

  s.Restore(RestoreDirection::kUndo, second);
  BOOST_TEST(s.Read("a") == "v1\n");
  BOOST_TEST(!s.Exists("b"));

  s.Restore(RestoreDirection::kUndo, first);
  BOOST_TEST(s.Read("a") == "v0\n");

  // Replay to an operation: just after it.
  RestorePlan replay = s.Restore(RestoreDirection::kReplay, second);
  BOOST_TEST(replay.boundary == second);
  BOOST_TEST(s.Read("a") == "v2\n");  // no later operation touched a: its final content
  BOOST_TEST(!s.Exists("b"));
}

// A rename that moves a directory into the root records the entries it
// carries right after itself, as one call: a restore to any of those
// records snaps to the call's bounds, never between them.
BOOST_AUTO_TEST_CASE(ARestoreToARecordOfACallSnapsToTheWholeCall) {
  Session s;
  s.b.Op(OpKind::kModify, "a", s.b.File("v0\n"));
  uint64_t move = s.b.Op(OpKind::kRename, "/outside/src", FileState(), "in", HistoryBuilder::Absent());
  s.b.last_op().flags |= kOutsideRoot;
  s.b.last_op().before.type = FileType::kUnknown;
  uint64_t carried = s.b.Op(OpKind::kCreate, "in/f", HistoryBuilder::Absent());
  s.b.last_op().flags |= kCarried;
  uint64_t after = s.b.Op(OpKind::kModify, "a", s.b.File("v1\n"));
  s.b.Final("a", s.b.File("v2\n"));
  s.b.Final("in", HistoryBuilder::Dir());
  s.b.Final("in/f", s.b.File("carried in\n"));
  s.Write("a", "v2\n");
  s.Mkdir("in");
  s.Write("in/f", "carried in\n");

  SessionHistory h = s.b.Build();
  BOOST_TEST(h.CallStart(carried) == move);
  BOOST_TEST(h.CallEnd(move) == carried);
  BOOST_TEST(h.CallStart(after) == after);

  for (uint64_t to : {move, carried}) {
    BOOST_TEST_CONTEXT("undo --to " << to) {
      RestorePlan undo = s.Plan(RestoreDirection::kUndo, to);
      BOOST_TEST(undo.boundary == move - 1);
      BOOST_TEST(Describe(undo, "in") == "remove");
      BOOST_TEST(Describe(undo, "in/f") == "remove");
    }
    BOOST_TEST_CONTEXT("replay --to " << to) {
      RestorePlan replay = s.Plan(RestoreDirection::kReplay, to);
      BOOST_TEST(replay.boundary == carried);
    }
  }
  RestorePlan undo = s.Plan(RestoreDirection::kUndo, after);
  BOOST_TEST(undo.boundary == after - 1);
  BOOST_TEST(Change(undo, "in/f") == nullptr);
  BOOST_TEST(Describe(undo, "a") == "restore");
}

}  // namespace
}  // namespace guard
