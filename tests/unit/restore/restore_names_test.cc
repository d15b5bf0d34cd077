// RestoreNames (the names a restore must bring to their targets) and the
// SessionHistory rules it relies on: directory moves, exchanges, renames a
// death interrupted.
#define BOOST_TEST_MODULE restore_names
#include <boost/test/unit_test.hpp>

#include "supervisor/restore/restore_names.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::HistoryBuilder;
using testing::TempDir;

bool Has(const std::set<std::string>& names, const std::string& n) { return names.count(n) > 0; }

BOOST_AUTO_TEST_CASE(WithoutMovesTheNamesAreThoseOfTheRecords) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kModify, "a", b.File("old\n"));
  b.Op(OpKind::kCreate, "dir/new", HistoryBuilder::Absent());
  b.Final("a", b.File("new\n"));
  b.Final("dir/new", b.File("n\n"));
  b.Final("other", b.File("o\n"));
  std::set<std::string> names = RestoreNames(b.Build());
  BOOST_TEST((names == std::set<std::string>{"a", "dir/new", "other"}));
}

BOOST_AUTO_TEST_CASE(AFileBelowAMovedDirectoryHasItsNameOnBothSides) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kModify, "d/touched", b.File("t\n"));   // seen before the move as d/...
  b.Op(OpKind::kRename, "d", HistoryBuilder::Dir(), "e", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "e/late", HistoryBuilder::Absent());  // seen after it as e/...
  b.Final("e/untouched", b.File("u\n"));
  std::set<std::string> names = RestoreNames(b.Build());
  // (d/late is there too: what is e/late after the move would have been
  // d/late before it, had it existed; its target says it did not.)
  for (const char* n : {"d/touched", "e/touched", "e/late", "d/late", "e/untouched", "d/untouched", "d", "e"}) {
    BOOST_TEST(Has(names, n), n);
  }
  FileState then;
  BOOST_REQUIRE(b.Build().StateAfter("d/late", 0, &then));
  BOOST_TEST((then.type == FileType::kAbsent));
}

BOOST_AUTO_TEST_CASE(AnExchangeSwapsTheNamesBelowBothSides) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kExchange, "a", HistoryBuilder::Dir(), "b", HistoryBuilder::Dir());
  b.Final("a/x", b.File("x\n"));
  b.Final("b/y", b.File("y\n"));
  std::set<std::string> names = RestoreNames(b.Build());
  for (const char* n : {"a/x", "b/x", "b/y", "a/y"}) BOOST_TEST(Has(names, n), n);
}

// The pattern that made the old closure grow without end: directories moved
// into each other, over and over. The names grow with the moves, linearly.
BOOST_AUTO_TEST_CASE(DirectoriesMovedIntoEachOtherGiveFewNames) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kRename, "A/s", HistoryBuilder::Dir(), "B/s", HistoryBuilder::Absent());
  b.Op(OpKind::kMkdir, "A/s", HistoryBuilder::Absent());
  b.Op(OpKind::kRename, "B", HistoryBuilder::Dir(), "A/s/B", HistoryBuilder::Absent());
  for (int i = 0; i < 20; ++i) {
    b.Op(OpKind::kMkdir, "B", HistoryBuilder::Absent());
    b.Op(OpKind::kRename, "A", HistoryBuilder::Dir(), "B/A", HistoryBuilder::Absent());
    b.Op(OpKind::kMkdir, "A", HistoryBuilder::Absent());
    b.Op(OpKind::kRename, "B", HistoryBuilder::Dir(), "A/B", HistoryBuilder::Absent());
  }
  b.Final("A/B/A/s/B/g", b.File("g\n"));
  SessionHistory h = b.Build();
  std::set<std::string> names = RestoreNames(h);
  // 83 operations, 42 moves: a few names per operation and move, not 2^42.
  BOOST_TEST(names.size() < 1000u, names.size() << " names");
}

BOOST_AUTO_TEST_CASE(ARenameADeathInterruptedWhoseSourceIsStillThereDidNotRun) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState content = b.File("precious\n");
  b.Op(OpKind::kRename, "a.txt", HistoryBuilder::Meta(0644, content.size), "b.txt", HistoryBuilder::Absent());
  b.Interrupt();
  b.Final("a.txt", content);
  b.Final("b.txt", HistoryBuilder::Absent());
  SessionHistory h = b.Build();
  BOOST_TEST(h.ops().empty());
  BOOST_REQUIRE(h.all_ops().size() == 1u);
  BOOST_TEST(h.all_ops()[0].not_run);
  FileState start;
  BOOST_REQUIRE(h.StateAfter("a.txt", 0, &start));
  BOOST_TEST((start.blob == content.blob), "a.txt before the session holds its content");
  BOOST_REQUIRE(h.StateAfter("b.txt", 0, &start));
  BOOST_TEST((start.type == FileType::kAbsent));
}

BOOST_AUTO_TEST_CASE(ARenameADeathInterruptedAfterItRanIsTakenAsDone) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState content = b.File("precious\n");
  b.Op(OpKind::kRename, "a.txt", HistoryBuilder::Meta(0644, content.size), "b.txt", HistoryBuilder::Absent());
  b.Interrupt();
  b.Final("a.txt", HistoryBuilder::Absent());
  b.Final("b.txt", content);
  SessionHistory h = b.Build();
  BOOST_REQUIRE(h.ops().size() == 1u);
  BOOST_TEST(!h.ops()[0].not_run);
  FileState start;
  BOOST_REQUIRE(h.StateAfter("a.txt", 0, &start));
  BOOST_TEST((start.blob == content.blob), "the content followed the rename back to a.txt");
}

// A call without an outcome because other calls ran on its paths meanwhile
// (a one-stop call that could not be settled): the next record of its source
// by another thread may have been stopped, its state taken, before the
// rename ran. Three shells each writing a shared name and renaming it away
// (session 19): the recreation's record finds the source there, yet the
// rename ran; taking it as "not run" left its destination after undo.
BOOST_AUTO_TEST_CASE(ARenameWhoseSourceAnotherThreadRecordsAsThereMayStillHaveRun) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState first = b.File("first\n");
  FileState second = b.File("second!\n");
  b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, first.size), "s1", HistoryBuilder::Absent());
  b.last_op().pid = 101;
  b.Interrupt();
  // Thread 202's open of "shared" for writing, stopped before 101's rename
  // ran: it saw the first file still there.
  b.Op(OpKind::kModify, "shared", first);
  b.last_op().pid = 202;
  b.Final("shared", second);
  b.Final("s1", first);
  SessionHistory h = b.Build();
  BOOST_REQUIRE(h.all_ops().size() == 2u);
  BOOST_TEST(!h.all_ops()[0].not_run);
  FileState start;
  BOOST_REQUIRE(h.StateAfter("s1", 0, &start));
  BOOST_TEST((start.type == FileType::kAbsent), "s1 did not exist before the session");
}

// The same record is evidence once the rename's thread is seen past it (a
// later call of its own, recorded before the other thread's): then the
// source found there was never renamed.
BOOST_AUTO_TEST_CASE(ARenameWhoseThreadWentOnBeforeAnotherFoundItsSourceThereDidNotRun) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState first = b.File("first\n");
  b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, first.size), "s1", HistoryBuilder::Absent());
  b.last_op().pid = 101;
  b.Interrupt();
  b.Op(OpKind::kCreate, "other", HistoryBuilder::Absent());
  b.last_op().pid = 101;
  b.Op(OpKind::kModify, "shared", first);
  b.last_op().pid = 202;
  b.Final("shared", first);
  b.Final("s1", HistoryBuilder::Absent());
  b.Final("other", b.File("o\n"));
  SessionHistory h = b.Build();
  BOOST_REQUIRE(h.all_ops().size() == 3u);
  BOOST_TEST(h.all_ops()[0].not_run);
}

// Not if a call of another thread may have made the source again after the
// rename ran, unseen by the records in between: one recorded only after it
// ran (kAfterItRan: an O_EXCL creation guard expected to fail), later than
// the rename. Three processes racing over one name (session 20): the
// rename's own next call found the name made again, and the rename was
// taken as never run.
BOOST_AUTO_TEST_CASE(ARenameWhoseSourceACallRecordedAfterItRanMayHaveMadeAgainMayStillHaveRun) {
  for (bool late : {false, true}) {
    BOOST_TEST_CONTEXT("a creation recorded after it ran: " << late) {
      TempDir tmp;
      HistoryBuilder b(tmp.path + "/store");
      FileState first = b.File("first\n");
      FileState second = b.File("second!\n");
      b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, first.size), "s1", HistoryBuilder::Absent());
      b.last_op().pid = 101;
      b.Interrupt();
      b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, second.size), "s2", HistoryBuilder::Absent());
      b.last_op().pid = 101;
      b.Op(OpKind::kCreate, late ? "shared" : "elsewhere", HistoryBuilder::Absent());
      b.last_op().pid = 202;
      b.last_op().flags |= kAfterItRan;
      b.Final("shared", HistoryBuilder::Absent());
      b.Final("s1", first);
      b.Final("s2", second);
      b.Final("elsewhere", HistoryBuilder::Absent());
      SessionHistory h = b.Build();
      BOOST_REQUIRE(h.all_ops().size() == 3u);
      BOOST_TEST(h.all_ops()[0].not_run == !late);
    }
  }
}

// Nor if such a call was recorded before the rename but had its outcome
// only after it: it may have run after the rename.
BOOST_AUTO_TEST_CASE(ARenameWhoseSourceACallInFlightMayHaveMadeAgainMayStillHaveRun) {
  for (bool in_flight : {false, true}) {
    BOOST_TEST_CONTEXT("the creation's outcome after the rename: " << in_flight) {
      TempDir tmp;
      HistoryBuilder b(tmp.path + "/store");
      FileState first = b.File("first\n");
      FileState second = b.File("second!\n");
      uint64_t create = b.Op(OpKind::kCreate, "shared", HistoryBuilder::Absent());
      b.last_op().pid = 202;
      if (in_flight) b.Interrupt();
      b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, first.size), "s1", HistoryBuilder::Absent());
      b.last_op().pid = 101;
      b.Interrupt();
      if (in_flight) b.Outcome(create);
      b.Op(OpKind::kRename, "shared", HistoryBuilder::Meta(0644, second.size), "s2", HistoryBuilder::Absent());
      b.last_op().pid = 101;
      b.Final("shared", HistoryBuilder::Absent());
      b.Final("s1", first);
      b.Final("s2", second);
      SessionHistory h = b.Build();
      BOOST_REQUIRE(h.all_ops().size() == 3u);
      BOOST_TEST(h.all_ops()[1].not_run == !in_flight);
    }
  }
}

BOOST_AUTO_TEST_CASE(AnExchangeADeathInterruptedIsTakenAsRunOnlyWhereTheFilesMoved) {
  for (bool ran : {false, true}) {
    BOOST_TEST_CONTEXT("the exchange " << (ran ? "ran" : "did not run")) {
      TempDir tmp;
      HistoryBuilder b(tmp.path + "/store");
      FileState a = b.File("aaaa\n");
      FileState bb = b.File("bbbbbbbb\n");
      a.mtime_ns = 111;
      bb.mtime_ns = 222;
      FileState a_meta = a, b_meta = bb;  // what an exchange records: no content
      a_meta.blob = BlobRef();
      b_meta.blob = BlobRef();
      b.Op(OpKind::kExchange, "a", a_meta, "b", b_meta);
      b.Interrupt();
      b.Final("a", ran ? bb : a);
      b.Final("b", ran ? a : bb);
      SessionHistory h = b.Build();
      BOOST_REQUIRE(h.all_ops().size() == 1u);
      BOOST_TEST(h.all_ops()[0].not_run == !ran);
      FileState start;
      BOOST_REQUIRE(h.StateAfter("a", 0, &start));
      BOOST_TEST((start.blob == a.blob), "a before the session holds its own content");
    }
  }
}

// The content of a rename's source is found through its destination's final
// state; when that record was lost, StateAfter says where the trail ended.
BOOST_AUTO_TEST_CASE(ALostTrailNamesWhereTheContentIs) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kRename, "a.txt", HistoryBuilder::Meta(), "b.txt", HistoryBuilder::Absent());
  SessionHistory h = b.Build();  // no final state of b.txt: lost
  FileState start;
  std::string lost_at;
  BOOST_TEST(!h.StateAfter("a.txt", 0, &start, &lost_at));
  BOOST_TEST(lost_at == "b.txt");
}

}  // namespace
}  // namespace guard
