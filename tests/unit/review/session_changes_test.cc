#define BOOST_TEST_MODULE session_changes
#include <boost/test/unit_test.hpp>

#include "supervisor/review/session_changes.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::HistoryBuilder;
using testing::TempDir;

const PathChange* Find(const SessionChanges& c, const std::string& path) {
  for (const PathChange& p : c.paths()) {
    if (p.path == path) return &p;
  }
  return nullptr;
}

std::vector<std::string> Paths(const SessionChanges& c) {
  std::vector<std::string> out;
  for (const PathChange& p : c.paths()) out.push_back(p.path);
  return out;
}

BOOST_AUTO_TEST_CASE(ModifiedFileGoesFromPreImageToFinalState) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState old_content = b.File("old\n");
  FileState new_content = b.File("new\n");
  b.Op(OpKind::kModify, "a.txt", old_content);
  b.Final("a.txt", new_content);
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  const PathChange* a = Find(c, "a.txt");
  BOOST_REQUIRE(a != nullptr);
  BOOST_TEST(a->before_known);
  BOOST_TEST(a->after_known);
  BOOST_TEST((a->before == old_content));
  BOOST_TEST((a->after.blob == new_content.blob));
}

BOOST_AUTO_TEST_CASE(RenamedFileIsAbsentAtItsOldNameAndPresentAtTheNew) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState content = b.File("moved\n");
  b.Op(OpKind::kRename, "old", HistoryBuilder::Meta(0644, 6), "new", HistoryBuilder::Absent());
  b.Final("old", HistoryBuilder::Absent());
  b.Final("new", content);
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  const PathChange* old_path = Find(c, "old");
  const PathChange* new_path = Find(c, "new");
  BOOST_REQUIRE(old_path != nullptr);
  BOOST_REQUIRE(new_path != nullptr);
  // The rename's source carries no content: it is followed to where it went.
  BOOST_TEST((old_path->before.blob == content.blob));
  BOOST_TEST((old_path->after.type == FileType::kAbsent));
  BOOST_TEST((new_path->before.type == FileType::kAbsent));
  BOOST_TEST((new_path->after.blob == content.blob));
}

BOOST_AUTO_TEST_CASE(ToSeqStopsJustAfterThatOperation) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState v1 = b.File("v1\n"), v2 = b.File("v2\n"), v3 = b.File("v3\n");
  uint64_t first = b.Op(OpKind::kModify, "f", v1);
  b.Op(OpKind::kModify, "f", v2);
  b.Op(OpKind::kCreate, "later", HistoryBuilder::Absent());
  b.Final("f", v3);
  b.Final("later", b.File(""));
  SessionChanges c = SessionChanges::Collect(b.Build(), first, {});
  BOOST_TEST(Paths(c) == std::vector<std::string>{"f"});
  BOOST_TEST((c.paths()[0].before.blob == v1.blob));
  BOOST_TEST((c.paths()[0].after.blob == v2.blob));
}

BOOST_AUTO_TEST_CASE(OnlyKeepsPathsAtOrBelowTheGivenOnes) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kCreate, "src/a.c", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "src-old", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "doc/x", HistoryBuilder::Absent());
  b.Final("src/a.c", b.File("a"));
  b.Final("src-old", b.File("b"));
  b.Final("doc/x", b.File("c"));
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {"src"});
  BOOST_TEST(Paths(c) == std::vector<std::string>{"src/a.c"});
  SessionChanges all = SessionChanges::Collect(b.Build(), kSessionEnd, {"."});
  BOOST_TEST(all.paths().size() == 3u);
}

BOOST_AUTO_TEST_CASE(DirectoriesComeBeforeWhatTheyHold) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kCreate, "a-b", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "a/b", HistoryBuilder::Absent());
  b.Op(OpKind::kMkdir, "a", HistoryBuilder::Absent());
  b.Final("a-b", b.File(""));
  b.Final("a/b", b.File(""));
  b.Final("a", HistoryBuilder::Dir());
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  BOOST_TEST(Paths(c) == (std::vector<std::string>{"a", "a/b", "a-b"}));
}

BOOST_AUTO_TEST_CASE(ContentBelowARenamedDirectoryMovesWithIt) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  FileState inner = b.File("inside\n");
  b.Op(OpKind::kRename, "dir", HistoryBuilder::Dir(), "moved", HistoryBuilder::Absent());
  b.Final("dir", HistoryBuilder::Absent());
  b.Final("moved", HistoryBuilder::Dir());
  b.Final("moved/f", inner);  // recorded at the end for what lay below the moved directory
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  const PathChange* at_old = Find(c, "dir/f");
  const PathChange* at_new = Find(c, "moved/f");
  BOOST_REQUIRE(at_old != nullptr);
  BOOST_REQUIRE(at_new != nullptr);
  BOOST_TEST(at_old->before_known);
  BOOST_TEST((at_old->before.blob == inner.blob));
  BOOST_TEST(at_old->after_known);
  BOOST_TEST((at_old->after.type == FileType::kAbsent));
  BOOST_TEST((at_new->before.type == FileType::kAbsent));
  BOOST_TEST((at_new->after.blob == inner.blob));
}

BOOST_AUTO_TEST_CASE(NothingExistsBelowAnAncestorThatIsNotADirectory) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  // "d" was a file before the session; a stale final says "d/x" exists.
  b.Op(OpKind::kDelete, "d", b.File("was a file"));
  b.Op(OpKind::kMkdir, "d", HistoryBuilder::Absent());
  b.Op(OpKind::kCreate, "d/x", HistoryBuilder::Absent());
  b.Final("d", HistoryBuilder::Dir());
  b.Final("d/x", b.File("x"));
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  const PathChange* x = Find(c, "d/x");
  BOOST_REQUIRE(x != nullptr);
  BOOST_TEST((x->before.type == FileType::kAbsent));
  BOOST_TEST((x->after.type == FileType::kRegular));
}

BOOST_AUTO_TEST_CASE(UnsealedSessionLeavesTheEndStateUnknown) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kModify, "f", b.File("before"));  // no kFinal: the supervisor died
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  BOOST_REQUIRE_EQUAL(c.paths().size(), 1u);
  BOOST_TEST(c.paths()[0].before_known);
  BOOST_TEST(!c.paths()[0].after_known);
}

BOOST_AUTO_TEST_CASE(FailedOperationsTouchNothing) {
  TempDir tmp;
  HistoryBuilder b(tmp.path + "/store");
  b.Op(OpKind::kDelete, "kept", b.File("k"), "", FileState(), /*result_errno=*/13);
  SessionChanges c = SessionChanges::Collect(b.Build(), kSessionEnd, {});
  BOOST_TEST(c.paths().empty());
}

}  // namespace
}  // namespace guard
