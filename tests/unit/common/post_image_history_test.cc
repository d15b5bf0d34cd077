// How a session's history reads post-images (docs/format.md, Part IV, "The
// session's work"): the last one of a path is its end state when the
// session has no final state for it and no later operation supersedes it;
// recovery's LastRecordedState says what the journal alone knows of a
// path's end.
#define BOOST_TEST_MODULE post_image_history
#include <boost/test/unit_test.hpp>

#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::HistoryBuilder;
using testing::TempDir;

struct Fixture {
  TempDir dir;
  HistoryBuilder b{dir.path + "/store"};
};

BOOST_FIXTURE_TEST_CASE(TheLastPostImageIsTheEndOfADeadSessionsPath, Fixture) {
  uint64_t open = b.Op(OpKind::kModify, "f", b.File("before\n"));
  b.PostImage("f", b.File("first\n"));
  FileState last = b.File("second\n");
  b.PostImage("f", last);
  SessionHistory h = b.Build();
  FileState end;
  BOOST_REQUIRE(h.StateAfter("f", open, &end));
  BOOST_TEST((end.blob == last.blob));
  BOOST_TEST(h.ChangedPaths() == std::vector<std::string>{"f"});
}

BOOST_FIXTURE_TEST_CASE(AnOperationAfterAPostImageSupersedesIt, Fixture) {
  b.Op(OpKind::kModify, "f", b.File("before\n"));
  b.PostImage("f", b.File("work\n"));
  uint64_t del = b.Op(OpKind::kDelete, "f", b.File("work\n"));
  SessionHistory h = b.Build();
  FileState end;
  BOOST_TEST(!h.StateAfter("f", del, &end));  // no final state: unknown, not the post-image
  bool no_writer = false;
  BOOST_REQUIRE(h.LastRecordedState("f", &end, &no_writer));
  BOOST_TEST((end.type == FileType::kAbsent));  // what the delete left
  BOOST_TEST(no_writer);
}

BOOST_FIXTURE_TEST_CASE(AFinalStateWinsOverAPostImage, Fixture) {
  uint64_t open = b.Op(OpKind::kModify, "f", b.File("before\n"));
  b.PostImage("f", b.File("saved while running\n"));
  FileState sealed = b.File("at the end\n");
  b.Final("f", sealed);
  b.End();
  SessionHistory h = b.Build();
  FileState end;
  BOOST_REQUIRE(h.StateAfter("f", open, &end));
  BOOST_TEST((end.blob == sealed.blob));
}

BOOST_FIXTURE_TEST_CASE(MovingADirectoryAboveSupersedesThePostImagesBelowIt, Fixture) {
  b.Op(OpKind::kCreate, "d/f", HistoryBuilder::Absent());
  b.PostImage("d/f", b.File("work\n"));
  b.Op(OpKind::kRename, "d", HistoryBuilder::Dir(), "e", HistoryBuilder::Absent());
  FileState moved = b.File("work\n");
  b.PostImage("e/f", moved);
  SessionHistory h = b.Build();
  BOOST_TEST(h.finals().count("d/f") == 0u);
  BOOST_REQUIRE(h.finals().count("e/f") == 1u);
  BOOST_TEST((h.finals().at("e/f").blob == moved.blob));
  FileState end;
  bool no_writer = false;
  BOOST_REQUIRE(h.LastRecordedState("d/f", &end, &no_writer));
  BOOST_TEST((end.type == FileType::kAbsent));  // moved away with its directory
}

BOOST_FIXTURE_TEST_CASE(APostImageSavedWithAWriterOpenSaysSo, Fixture) {
  b.Op(OpKind::kCreate, "log", HistoryBuilder::Absent());
  b.PostImage("log", b.File("line 1\n"), /*flags=*/0);
  SessionHistory h = b.Build();
  FileState end;
  bool no_writer = true;
  BOOST_REQUIRE(h.LastRecordedState("log", &end, &no_writer));
  BOOST_TEST(!no_writer);
}

BOOST_FIXTURE_TEST_CASE(TheLastCallSaysTheEndOfDirectoriesAndSymlinksItMade, Fixture) {
  b.Op(OpKind::kMkdir, "d", HistoryBuilder::Absent());
  b.last_op().new_mode = 0750;
  b.Op(OpKind::kSymlink, "l", HistoryBuilder::Absent());
  b.last_op().target = "d";
  b.Op(OpKind::kModify, "f", b.File("x\n"));
  SessionHistory h = b.Build();
  FileState end;
  bool no_writer = false;
  BOOST_REQUIRE(h.LastRecordedState("d", &end, &no_writer));
  BOOST_TEST((end.type == FileType::kDirectory));
  BOOST_TEST(end.mode == 0750u);
  BOOST_REQUIRE(h.LastRecordedState("l", &end, &no_writer));
  BOOST_TEST(end.symlink_target == "d");
  // A write leaves content no record holds.
  BOOST_TEST(!h.LastRecordedState("f", &end, &no_writer));
}

BOOST_FIXTURE_TEST_CASE(AfterAChmodTheSavedContentHasTheNewMode, Fixture) {
  b.Op(OpKind::kCreate, "f", HistoryBuilder::Absent());
  FileState work = b.File("work\n", 0644);
  work.ino = 7;  // a signature the chmod's new ctime outdates
  b.PostImage("f", work);
  b.Op(OpKind::kChmod, "f", HistoryBuilder::Meta(0644, 5));
  b.last_op().new_mode = 0600;
  SessionHistory h = b.Build();
  FileState end;
  bool no_writer = false;
  BOOST_REQUIRE(h.LastRecordedState("f", &end, &no_writer));
  BOOST_TEST((end.blob == work.blob));
  BOOST_TEST(end.mode == 0600u);
  BOOST_TEST(end.ino == 0u);
}

BOOST_FIXTURE_TEST_CASE(ARenameOntoAPathCarriesTheSourcesSavedState, Fixture) {
  b.Op(OpKind::kCreate, "tmp", HistoryBuilder::Absent());
  FileState work = b.File("atomic save\n");
  b.PostImage("tmp", work);
  b.Op(OpKind::kRename, "tmp", HistoryBuilder::Meta(0644, 12), "dst", b.File("old\n"));
  SessionHistory h = b.Build();
  FileState end;
  bool no_writer = false;
  BOOST_REQUIRE(h.LastRecordedState("dst", &end, &no_writer));
  BOOST_TEST((end.blob == work.blob));
  BOOST_REQUIRE(h.LastRecordedState("tmp", &end, &no_writer));
  BOOST_TEST((end.type == FileType::kAbsent));
}

BOOST_FIXTURE_TEST_CASE(AFailedCallDoesNotSupersedeAPostImage, Fixture) {
  b.Op(OpKind::kCreate, "f", HistoryBuilder::Absent());
  FileState work = b.File("work\n");
  b.PostImage("f", work);
  b.Op(OpKind::kDelete, "f", work, "", FileState(), /*result_errno=*/13);
  SessionHistory h = b.Build();
  BOOST_REQUIRE(h.finals().count("f") == 1u);
  BOOST_TEST((h.finals().at("f").blob == work.blob));
}

BOOST_FIXTURE_TEST_CASE(RecoveryFlagsOnFinalStatesAreKept, Fixture) {
  b.Op(OpKind::kCreate, "f", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "g", HistoryBuilder::Absent());
  // What recovery writes for a path reverted after the kill, and for one
  // whose work was never saved.
  b.Final("f", b.File("work\n"), kChangedAfterEnd);
  b.Final("g", HistoryBuilder::Absent(), kEndNotSaved);
  b.End();
  SessionHistory h = b.Build();
  BOOST_TEST(h.final_flags().size() == 2u);
  BOOST_TEST(h.final_flags().at("f") == static_cast<uint32_t>(kChangedAfterEnd));
  BOOST_TEST(h.final_flags().at("g") == static_cast<uint32_t>(kEndNotSaved));
}

}  // namespace
}  // namespace guard
