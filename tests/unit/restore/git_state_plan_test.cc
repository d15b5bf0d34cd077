// PlanGitState (supervisor/restore/git_state_plan.h), through PlanRestore,
// on a history built from records and a real temporary tree: which paths
// inside .git stay in the file-level plan, which become ref and index goals,
// which are left as they are, and that no object is ever removed. The end-
// to-end twin, with real git: e2e/git_state_restore_test.cc.
#define BOOST_TEST_MODULE git_state_plan
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "supervisor/restore/restore.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using testing::HistoryBuilder;
using testing::TempDir;

const std::string kC1(40, '1'), kC2(40, '2');

struct Session {
  TempDir tmp;
  HistoryBuilder b{tmp.path + "/store"};
  std::string root = tmp.path + "/tree";
  Session() { BOOST_REQUIRE(fs::create_directory(root)); }
  void Write(const std::string& rel, const std::string& content) {
    fs::create_directories(fs::path(root + "/" + rel).parent_path());
    std::ofstream(root + "/" + rel, std::ios::binary | std::ios::trunc) << content;
    BOOST_REQUIRE(chmod((root + "/" + rel).c_str(), 0644) == 0);
  }
  // A file the session changed from `before` to `after`, holding `now`.
  void Modified(const std::string& rel, const std::string& before, const std::string& after, const std::string& now) {
    b.Op(OpKind::kModify, rel, b.File(before));
    b.Final(rel, b.File(after));
    Write(rel, now);
  }
  RestorePlan Plan(RestoreDirection direction) {
    SafeTree tree;
    BOOST_REQUIRE(SafeTree::Open(root, &tree).ok());
    RestoreRequest request;
    request.direction = direction;
    RestorePlan plan;
    Status s = PlanRestore(b.Build(), tree, *b.store(), request, &plan);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    return plan;
  }
};

const RestoreItem* Change(const RestorePlan& plan, const std::string& path) {
  for (const RestoreItem& c : plan.changes)
    if (c.path == path) return &c;
  return nullptr;
}

const GitRefGoal* Ref(const RestorePlan& plan, const std::string& name) {
  for (const GitRefGoal& g : plan.git.refs)
    if (g.name == name) return &g;
  return nullptr;
}

bool Mentions(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const std::string& l : lines)
    if (l.rfind(prefix, 0) == 0) return true;
  return false;
}

// A session that ran git add, git commit and git checkout -b in a
// repository that was there before it, and what the user did since.
void GitSession(Session& s) {
  s.Write(".git/description", "unchanged\n");
  s.b.Op(OpKind::kMkdir, ".git/objects/ab", HistoryBuilder::Absent());
  s.b.Final(".git/objects/ab", HistoryBuilder::Dir());
  s.b.Op(OpKind::kCreate, ".git/objects/ab/cdef", HistoryBuilder::Absent());
  s.b.Final(".git/objects/ab/cdef", s.b.File("object"));
  s.Write(".git/objects/ab/cdef", "object");
  s.Modified(".git/refs/heads/main", kC1 + "\n", kC2 + "\n", kC2 + "\n");
  s.b.Op(OpKind::kCreate, ".git/refs/heads/feature", HistoryBuilder::Absent());
  s.b.Final(".git/refs/heads/feature", s.b.File(kC2 + "\n"));
  s.Write(".git/refs/heads/feature", kC2 + "\n");
  s.Modified(".git/HEAD", "ref: refs/heads/main\n", "ref: refs/heads/feature\n", "ref: refs/heads/feature\n");
  s.Modified(".git/index", "index one", "index two", "index two, then the user's git add");
  s.Modified(".git/config", "[core]\n", "[core]\n\tpager = evil\n", "[core]\n\tpager = evil\n[user]\n");
  s.Modified(".git/logs/HEAD", "a\n", "a\nb\n", "a\nb\nguard undo\n");
  s.Modified(".git/ORIG_HEAD", kC1 + "\n", kC2 + "\n", std::string(40, '3') + "\n");
  s.Modified("a.txt", "one\n", "two\n", "the user's\n");
}

BOOST_AUTO_TEST_CASE(AnUndoSortsGitsOwnFilesTheGitWay) {
  Session s;
  GitSession(s);
  RestorePlan plan = s.Plan(RestoreDirection::kUndo);

  // Objects: never removed, counted.
  BOOST_TEST(Change(plan, ".git/objects/ab/cdef") == nullptr);
  BOOST_TEST(Change(plan, ".git/objects/ab") == nullptr);
  BOOST_TEST(plan.git.objects_kept == 2u);
  for (const RestoreItem& t : plan.targets) BOOST_TEST(t.path.rfind(".git/objects", 0) != 0, t.path);
  // Refs: goals, out of the file-level plan.
  BOOST_TEST(Change(plan, ".git/refs/heads/main") == nullptr);
  BOOST_TEST(Change(plan, ".git/HEAD") == nullptr);
  BOOST_REQUIRE(Ref(plan, "refs/heads/main") != nullptr);
  BOOST_TEST(Ref(plan, "refs/heads/main")->target == kC1);
  BOOST_TEST(Ref(plan, "refs/heads/main")->expected == std::vector<std::string>{kC2});
  BOOST_REQUIRE(Ref(plan, "refs/heads/feature") != nullptr);
  BOOST_TEST(Ref(plan, "refs/heads/feature")->target == kRefInPackedRefs);
  BOOST_REQUIRE(Ref(plan, "HEAD") != nullptr);
  BOOST_TEST(Ref(plan, "HEAD")->target == "ref: refs/heads/main");
  BOOST_TEST(Ref(plan, "HEAD")->expected == std::vector<std::string>{"ref: refs/heads/feature"});
  // The index: a goal, never a conflict of the plan.
  BOOST_TEST(Change(plan, ".git/index") == nullptr);
  BOOST_REQUIRE(plan.git.indexes.size() == 1u);
  BOOST_TEST(plan.git.indexes[0].git_dir == ".git");
  BOOST_TEST(plan.git.indexes[0].expected.size() == 1u);
  // Config: restored although changed since, and said so.
  BOOST_REQUIRE(Change(plan, ".git/config") != nullptr);
  BOOST_TEST(!Change(plan, ".git/config")->conflict);
  BOOST_TEST(Mentions(plan.notes, ".git/config: restored although it changed since the session"));
  // A reflog that only gained lines: restored, no conflict.
  BOOST_REQUIRE(Change(plan, ".git/logs/HEAD") != nullptr);
  BOOST_TEST(!Change(plan, ".git/logs/HEAD")->conflict);
  // The rest of .git changed since: left, alone.
  BOOST_TEST(Change(plan, ".git/ORIG_HEAD") == nullptr);
  BOOST_TEST(Mentions(plan.git.left, ".git/ORIG_HEAD: changed since the session"));
  // The work tree: as ever.
  BOOST_REQUIRE(Change(plan, "a.txt") != nullptr);
  BOOST_TEST(Change(plan, "a.txt")->conflict);
  BOOST_TEST(plan.conflicts() == 1u);
}

BOOST_AUTO_TEST_CASE(ARefThatWasOnlyPackedTakesItsValueFromPackedRefsOfTheSameMoment) {
  Session s;
  s.Write(".git/HEAD", "ref: refs/heads/main\n");
  // main was packed; the session committed on it (a loose ref) and
  // rewrote packed-refs without it.
  s.Modified(".git/packed-refs", "# pack-refs with: peeled\n" + kC1 + " refs/heads/main\n^" + kC2 + "\n", "", "");
  s.b.Op(OpKind::kCreate, ".git/refs/heads/main", HistoryBuilder::Absent());
  s.b.Final(".git/refs/heads/main", s.b.File(kC2 + "\n"));
  s.Write(".git/refs/heads/main", kC2 + "\n");
  // gone was in no packed-refs: the undo deletes it.
  s.b.Op(OpKind::kCreate, ".git/refs/heads/gone", HistoryBuilder::Absent());
  s.b.Final(".git/refs/heads/gone", s.b.File(kC2 + "\n"));
  s.Write(".git/refs/heads/gone", kC2 + "\n");
  RestorePlan plan = s.Plan(RestoreDirection::kUndo);
  BOOST_REQUIRE(Ref(plan, "refs/heads/main") != nullptr);
  BOOST_TEST(Ref(plan, "refs/heads/main")->target == kC1);
  BOOST_REQUIRE(Ref(plan, "refs/heads/gone") != nullptr);
  BOOST_TEST(Ref(plan, "refs/heads/gone")->target == "");
  BOOST_TEST(PackedRefValue("# x\n" + kC1 + " refs/heads/a\n^" + kC2 + "\n" + kC2 + " refs/heads/ab\n", "refs/heads/ab") == kC2);
  BOOST_TEST(PackedRefValue(kC1 + " refs/heads/ab\n", "refs/heads/a") == "");
}

BOOST_AUTO_TEST_CASE(AReplayWritesBackAMissingObjectAndNeverWritesOverOne) {
  Session s;
  // The session wrote two objects; one has gone since (git gc packed it).
  for (const char* o : {".git/objects/ab/c1", ".git/objects/ab/c2"}) {
    s.b.Op(OpKind::kCreate, o, HistoryBuilder::Absent());
    s.b.Final(o, s.b.File(std::string("object ") + o));
  }
  s.Write(".git/HEAD", "ref: refs/heads/main\n");
  s.Write(".git/objects/ab/c1", "object .git/objects/ab/c1");
  s.Write(".git/objects/ab/c2", "something else");  // never so in git: not written over all the same
  fs::remove(s.root + "/.git/objects/ab/c1");
  RestorePlan plan = s.Plan(RestoreDirection::kReplay);
  BOOST_REQUIRE(Change(plan, ".git/objects/ab/c1") != nullptr);
  BOOST_TEST((Change(plan, ".git/objects/ab/c1")->target.type == FileType::kRegular));
  BOOST_TEST(!Change(plan, ".git/objects/ab/c1")->conflict);
  BOOST_TEST(Change(plan, ".git/objects/ab/c2") == nullptr);
}

BOOST_AUTO_TEST_CASE(ARepositoryTheSessionCreatedIsUndoneAsAnyDirectory) {
  Session s;
  s.b.Op(OpKind::kMkdir, "new/.git", HistoryBuilder::Absent());
  s.b.Final("new/.git", HistoryBuilder::Dir());
  s.b.Op(OpKind::kCreate, "new/.git/HEAD", HistoryBuilder::Absent());
  s.b.Final("new/.git/HEAD", s.b.File("ref: refs/heads/main\n"));
  s.b.Op(OpKind::kCreate, "new/.git/objects", HistoryBuilder::Absent());
  s.b.Final("new/.git/objects", s.b.File("not even a directory"));
  fs::create_directories(s.root + "/new");
  s.Write("new/.git/HEAD", "ref: refs/heads/main\n");
  s.Write("new/.git/objects", "not even a directory");
  RestorePlan plan = s.Plan(RestoreDirection::kUndo);
  BOOST_TEST(plan.git.refs.empty());
  BOOST_TEST(Change(plan, "new/.git/HEAD") != nullptr);
  BOOST_TEST(Change(plan, "new/.git/objects") != nullptr);
  BOOST_TEST(Change(plan, "new/.git") != nullptr);
  BOOST_TEST(plan.git.objects_kept == 0u);
}

}  // namespace
}  // namespace guard
