#define BOOST_TEST_MODULE session_tree
#include <boost/test/unit_test.hpp>

#include <map>

#include "common/file_io.h"
#include "supervisor/git/session_tree.h"
#include "supervisor/git/work_tree_repo.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::HistoryBuilder;
using testing::TempDir;

// A repository at tmp/repo whose base tree holds `files` (path -> content),
// with guard's state directory at tmp/repo/state.
struct Fixture {
  Fixture() : builder(tmp.path + "/store") {
    InitGitLibrary();
    root = tmp.path + "/repo";
    git_repository* r = nullptr;
    BOOST_REQUIRE(git_repository_init(&r, root.c_str(), 0) == 0);
    git_repository_free(r);
    BOOST_REQUIRE(WorkTreeRepo::Open(root, root + "/state", &repo).ok());
  }

  GitTree Base(const std::map<std::string, std::string>& files) {
    SessionTree t;
    HistoryBuilder b(tmp.path + "/base-store");
    for (const auto& [path, content] : files) {
      b.Op(OpKind::kCreate, path, HistoryBuilder::Absent());
      b.Final(path, b.File(content));
    }
    SessionChanges changes = SessionChanges::Collect(b.Build(), kSessionEnd, {});
    Status s = SessionTree::Build(repo, nullptr, changes, *b.store(), &t);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    Materialize(t, *b.store());
    git_tree* tree = nullptr;
    BOOST_REQUIRE(git_tree_lookup(&tree, repo.get(), &t.tree) == 0);
    return GitTree(tree);
  }

  SessionTree Build(const git_tree* base) {
    SessionTree t;
    SessionChanges changes = SessionChanges::Collect(builder.Build(), kSessionEnd, {});
    Status s = SessionTree::Build(repo, base, changes, *builder.store(), &t);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    Materialize(t, *builder.store());
    return t;
  }

  // The blobs Build left in the store (a checkpoint's pack streams them from
  // there) written to the repository, under the ids Build computed.
  void Materialize(const SessionTree& t, const BlobStore& store) {
    for (const StoredBlob& b : t.stored) {
      std::string data;
      BOOST_REQUIRE(store.ReadToString(b.ref, &data).ok());
      BOOST_TEST(data.size() == b.size);
      git_oid id;
      BOOST_REQUIRE(git_blob_create_from_buffer(&id, repo.get(), data.data(), data.size()) == 0);
      BOOST_TEST(git_oid_equal(&id, &b.id), "the id Build computed is the content's");
    }
  }

  // path -> blob content (symlinks: their target) of every file of tree `id`.
  std::map<std::string, std::string> Files(const git_oid& id) {
    git_tree* tree = nullptr;
    BOOST_REQUIRE(git_tree_lookup(&tree, repo.get(), &id) == 0);
    GitTree owned(tree);
    std::map<std::string, std::string> out;
    struct Walk {
      git_repository* repo;
      std::map<std::string, std::string>* out;
    } walk{repo.get(), &out};
    git_tree_walk(
        tree, GIT_TREEWALK_PRE,
        [](const char* dir, const git_tree_entry* e, void* p) -> int {
          auto* w = static_cast<Walk*>(p);
          if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) return 0;
          git_blob* blob = nullptr;
          if (git_blob_lookup(&blob, w->repo, git_tree_entry_id(e)) != 0) return -1;
          (*w->out)[std::string(dir) + git_tree_entry_name(e)] =
              std::string(static_cast<const char*>(git_blob_rawcontent(blob)), git_blob_rawsize(blob));
          git_blob_free(blob);
          return 0;
        },
        &walk);
    return out;
  }

  TempDir tmp;
  HistoryBuilder builder;
  std::string root;
  WorkTreeRepo repo;
};

BOOST_FIXTURE_TEST_CASE(TouchedPathsReplaceTheBaseAndTheRestStays, Fixture) {
  GitTree base = Base({{"keep.txt", "kept\n"}, {"a.txt", "old\n"}, {"gone.txt", "x\n"}});
  builder.Op(OpKind::kModify, "a.txt", builder.File("old\n"));
  builder.Final("a.txt", builder.File("new\n"));
  builder.Op(OpKind::kDelete, "gone.txt", builder.File("x\n"));
  builder.Final("gone.txt", HistoryBuilder::Absent());
  builder.Op(OpKind::kCreate, "dir/n.txt", HistoryBuilder::Absent());
  builder.Final("dir/n.txt", builder.File("n\n"));
  builder.End();
  SessionTree t = Build(base.get());
  BOOST_TEST((Files(t.tree) == std::map<std::string, std::string>{
                  {"a.txt", "new\n"}, {"dir/n.txt", "n\n"}, {"keep.txt", "kept\n"}}));
  BOOST_TEST(t.written == 2u);
  BOOST_TEST(t.removed == 1u);
}

BOOST_FIXTURE_TEST_CASE(AFileReplacedByADirectoryAndADirectoryByAFile, Fixture) {
  // "a-b" sorts between "a" and "a/x" byte-wise: the update order must not matter.
  GitTree base = Base({{"a", "file\n"}, {"d/x", "in d\n"}, {"d/y/z", "deep\n"}, {"a-b", "dash\n"}});
  builder.Op(OpKind::kDelete, "a", builder.File("file\n"));
  builder.Op(OpKind::kMkdir, "a", HistoryBuilder::Absent());
  builder.Final("a", HistoryBuilder::Dir());
  builder.Op(OpKind::kCreate, "a/x", HistoryBuilder::Absent());
  builder.Final("a/x", builder.File("under a\n"));
  builder.Op(OpKind::kModify, "a-b", builder.File("dash\n"));
  builder.Final("a-b", builder.File("dash 2\n"));
  builder.Op(OpKind::kDelete, "d/x", builder.File("in d\n"));
  builder.Op(OpKind::kDelete, "d/y/z", builder.File("deep\n"));
  builder.Op(OpKind::kRmdir, "d/y", HistoryBuilder::Dir());
  builder.Op(OpKind::kRmdir, "d", HistoryBuilder::Dir());
  builder.Op(OpKind::kCreate, "d", HistoryBuilder::Absent());
  builder.Final("d", builder.File("now a file\n"));
  builder.End();
  SessionTree t = Build(base.get());
  BOOST_TEST((Files(t.tree) == std::map<std::string, std::string>{
                  {"a/x", "under a\n"}, {"a-b", "dash 2\n"}, {"d", "now a file\n"}}));
}

BOOST_FIXTURE_TEST_CASE(GitDirectoriesAndGuardStateAreNeverInTheTree, Fixture) {
  builder.Op(OpKind::kCreate, ".git/config", HistoryBuilder::Absent());
  builder.Final(".git/config", builder.File("[core]\n"));
  builder.Op(OpKind::kCreate, "sub/.git/HEAD", HistoryBuilder::Absent());
  builder.Final("sub/.git/HEAD", builder.File("ref\n"));
  builder.Op(OpKind::kCreate, "state/sessions/x", HistoryBuilder::Absent());
  builder.Final("state/sessions/x", builder.File("meta\n"));
  builder.Op(OpKind::kCreate, ".gitignore", HistoryBuilder::Absent());
  builder.Final(".gitignore", builder.File("*.o\n"));
  builder.Op(OpKind::kCreate, "stateful.txt", HistoryBuilder::Absent());
  builder.Final("stateful.txt", builder.File("s\n"));
  builder.End();
  SessionTree t = Build(nullptr);
  BOOST_TEST((Files(t.tree) == std::map<std::string, std::string>{{".gitignore", "*.o\n"}, {"stateful.txt", "s\n"}}));
  BOOST_TEST(t.excluded == 3u);
}

BOOST_FIXTURE_TEST_CASE(APathWhoseStateIsNotSavedYetStaysAsInTheBase, Fixture) {
  GitTree base = Base({{"busy.txt", "before\n"}});
  // Running, no post-image yet: the journal does not know what it holds.
  builder.Op(OpKind::kModify, "busy.txt", builder.File("before\n"));
  builder.Op(OpKind::kCreate, "saved.txt", HistoryBuilder::Absent());
  builder.PostImage("saved.txt", builder.File("saved\n"));
  SessionTree t = Build(base.get());
  BOOST_TEST((Files(t.tree) == std::map<std::string, std::string>{{"busy.txt", "before\n"}, {"saved.txt", "saved\n"}}));
  BOOST_TEST(t.unknown == 1u);
}

}  // namespace
}  // namespace guard
