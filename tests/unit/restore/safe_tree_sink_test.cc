// SafeTree (supervisor/restore/safe_tree.h) telling its changes to a
// MutationSink, as the restore's own session needs them (restore_session.h):
// each change before it is made, with the absolute paths the tracer would
// have resolved, its result after, and none made that the sink refuses.
#define BOOST_TEST_MODULE safe_tree_sink
#include <fcntl.h>
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "supervisor/restore/safe_tree.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using Action = MutationRequest::Action;
using testing::TempDir;

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Records every call; refuses the changes naming `refuse` with EIO.
struct FakeSink final : MutationSink {
  struct Call {
    Action action;
    std::string abs, abs2;
    bool existed;  // lstat of abs succeeded when Before was called
    uint32_t mode;
  };
  std::vector<Call> before;
  std::vector<long> results;
  std::string refuse;
  Verdict Before(const Mutation& m) override {
    before.push_back({m.req.action, m.abs, m.abs2, Exists(m.abs), m.req.mode});
    Verdict v;
    if (m.abs == refuse || (m.has2 && m.abs2 == refuse)) v.deny_errno = EIO;
    v.watch_exit = v.deny_errno == 0;
    return v;
  }
  void After(pid_t, long result) override { results.push_back(result); }
  void Returned(pid_t) override {}
  void Abandon(pid_t) override {}
  void ForgetProcess(pid_t) override {}
};

struct Tree {
  TempDir tmp;
  std::string root = tmp.path + "/tree";
  std::unique_ptr<BlobStore> store;
  SafeTree tree;
  FakeSink sink;
  Tree() {
    BOOST_REQUIRE(fs::create_directory(root));
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
    BOOST_REQUIRE(SafeTree::Open(root, &tree).ok());
    tree.SetSink(&sink);
  }
  BlobRef Blob(const std::string& content) {
    BlobRef ref;
    ref.kind = BlobRef::Kind::kKey;
    BOOST_REQUIRE(store->PutBytes(content, &ref.key).ok());
    return ref;
  }
  std::string Read(const std::string& rel) const {
    std::ifstream in(root + "/" + rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Stages and commits `content` at `rel`.
  Status Put(const std::string& rel, const std::string& content, uint32_t mode = 0644) {
    SafeTree::Staged staged;
    GUARD_RETURN_IF_ERROR(tree.StageFile(rel, *store, Blob(content), mode, &staged));
    GUARD_RETURN_IF_ERROR(tree.SyncStaged({staged}));
    return tree.CommitStaged(staged);
  }
};

BOOST_AUTO_TEST_CASE(EveryChangeIsToldBeforeItIsMadeAndItsResultAfter) {
  Tree t;
  umask(022);
  BOOST_REQUIRE(t.tree.MakeDir("d", 0755).ok());
  BOOST_REQUIRE(t.Put("d/f", "content\n").ok());
  BOOST_REQUIRE(t.tree.MakeSymlink("d/s", "f").ok());
  BOOST_REQUIRE(t.tree.Chmod("d/f", 0600).ok());
  BOOST_REQUIRE(t.tree.Remove("d/s").ok());

  const auto& c = t.sink.before;
  BOOST_REQUIRE_EQUAL(c.size(), 6u);
  BOOST_TEST((c[0].action == Action::kMkdir && c[0].abs == t.root + "/d" && !c[0].existed));
  BOOST_TEST(c[0].mode == 0755u);  // made with its mode: no chmod to record
  // The staged file: created beside its place, then renamed over it.
  BOOST_TEST((c[1].action == Action::kOpen && !c[1].existed));
  BOOST_TEST(c[1].abs.rfind(t.root + "/d/.guard-restore.", 0) == 0, c[1].abs);
  BOOST_TEST((c[2].action == Action::kRename && c[2].abs == c[1].abs && c[2].abs2 == t.root + "/d/f"));
  BOOST_TEST((c[3].action == Action::kSymlink && c[3].abs == t.root + "/d/s"));
  BOOST_TEST((c[4].action == Action::kChmod && c[4].abs == t.root + "/d/f" && c[4].mode == 0600u));
  BOOST_TEST((c[5].action == Action::kUnlink && c[5].abs == t.root + "/d/s" && c[5].existed));
  BOOST_REQUIRE_EQUAL(t.sink.results.size(), 6u);
  for (size_t i = 0; i < t.sink.results.size(); ++i) BOOST_TEST(t.sink.results[i] >= 0, "change " << i);
  BOOST_TEST(t.Read("d/f") == "content\n");
  // What was written, for the seal: its content by key, its inode.
  auto w = t.tree.written().find("d/f");
  BOOST_REQUIRE(w != t.tree.written().end());
  struct stat st;
  BOOST_REQUIRE(lstat((t.root + "/d/f").c_str(), &st) == 0);
  BOOST_TEST(w->second.ino == static_cast<uint64_t>(st.st_ino));
  BOOST_TEST(w->second.size == 8u);
}

BOOST_AUTO_TEST_CASE(AChangeTheSinkRefusesIsNotMade) {
  Tree t;
  BOOST_REQUIRE(t.Put("f", "old\n").ok());
  t.sink.refuse = t.root + "/f";
  // The rename over f is refused: f keeps its content, and the staged copy goes.
  Status s = t.Put("f", "new\n");
  BOOST_TEST(!s.ok());
  BOOST_TEST(t.Read("f") == "old\n");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(t.root)) names.push_back(e.path().filename().string());
  BOOST_TEST(names == std::vector<std::string>{"f"});
  BOOST_TEST(!t.tree.Remove("f").ok());
  BOOST_TEST(Exists(t.root + "/f"));
  BOOST_TEST(!t.tree.Chmod("f", 0600).ok());
}

BOOST_AUTO_TEST_CASE(AFileInADirectoryMadeAgainLandsInTheNewDirectory) {
  // The parent opened last is kept for the next path: a directory removed
  // and made again under the same name must not be written through the
  // old one's fd (the file would vanish with it).
  Tree t;
  BOOST_REQUIRE(t.tree.MakeDir("d", 0755).ok());
  BOOST_REQUIRE(t.Put("d/a", "first\n").ok());
  BOOST_REQUIRE(t.tree.Remove("d/a").ok());
  BOOST_REQUIRE(t.tree.Remove("d").ok());
  BOOST_REQUIRE(t.tree.MakeDir("d", 0700).ok());
  BOOST_REQUIRE(t.Put("d/b", "second\n").ok());
  BOOST_TEST(t.Read("d/b") == "second\n");
}

BOOST_AUTO_TEST_CASE(ADirectoryMadeInASetGidDirectoryGetsExactlyItsMode) {
  // mkdir in a set-gid directory makes a set-gid directory, whatever mode
  // it is given: the restore must set the mode the journal holds.
  Tree t;
  umask(022);
  BOOST_REQUIRE(t.tree.MakeDir("p", 0755).ok());
  BOOST_REQUIRE(chmod((t.root + "/p").c_str(), 02755) == 0);
  BOOST_REQUIRE(t.tree.MakeDir("p/d", 0755).ok());
  struct stat st;
  BOOST_REQUIRE(lstat((t.root + "/p/d").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0755u);
}

BOOST_AUTO_TEST_CASE(AParentThatIsASymlinkIsRefusedWithoutTellingTheSink) {
  Tree t;
  TempDir outside;
  BOOST_REQUIRE(symlink(outside.path.c_str(), (t.root + "/link").c_str()) == 0);
  Status s = t.Put("link/f", "escaped\n");
  BOOST_TEST(s.code() == Status::Code::kInvalidArgument, s.ToString());
  BOOST_TEST(!Exists(outside.path + "/f"));
  BOOST_TEST(t.sink.before.empty());
}

}  // namespace
}  // namespace guard
