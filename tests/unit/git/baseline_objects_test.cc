// Watch mode's baseline by git object id (baseline_objects.h) against a real
// repository written by the git program: clean tracked files are recorded by
// their blob id and not copied, a file changed since git hashed it is
// copied, the ids are pinned by refs/guard-baseline/<id> so that a pre-image
// survives the command's own `git gc --prune=now`, and the pin is what makes
// it survive (without it the pre-image is lost, and said to be).
#define BOOST_TEST_MODULE baseline_objects
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/path_util.h"
#include "supervisor/git/baseline_objects.h"
#include "supervisor/watch/watched_tree.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

int64_t Ns(const struct timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

void Run(const std::string& cmd) { BOOST_REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd); }

std::string Output(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  BOOST_REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void Write(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << content;
  BOOST_REQUIRE(f.good());
}

int64_t CtimeOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return Ns(st.st_ctim);
}

// Until the file system's clock has passed `ns` (not a sleep of a guessed
// length): an index written after this is newer than every file, so its
// entries are not racily clean (index_oids.h).
void WaitForClockPast(const std::string& dir, int64_t ns) {
  const std::string probe = dir + "/.probe";
  for (;;) {
    Write(probe, "x");
    if (CtimeOf(probe) > ns) break;
    ::usleep(1000);
  }
  ::unlink(probe.c_str());
}

// The watch layer's view of BaselineObjects, as commands/session_watch.cc
// gives it.
class Kept : public KeptContent {
 public:
  explicit Kept(BaselineObjects* o) : o_(o) {}
  bool Find(const std::string& rel, const FileState& st, std::string* id) override { return o_->Find(rel, st, id); }
  Status Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size) override {
    return o_->Fetch(id, store, key, size);
  }
  Status Pin() override { return o_->Pin(); }
  void AttributeFilesUnderRoot(bool any) override { o_->AttributeFilesUnderRoot(any); }

 private:
  BaselineObjects* o_;
};

const char* kGit = "git -c user.name=t -c user.email=t@t -c gc.auto=0";

struct Fixture {
  testing::TempDir tmp{"guard-baseline-objects"};
  std::string root = tmp.path + "/repo";
  std::unique_ptr<BlobStore> store;
  std::unique_ptr<BaselineObjects> objects;
  std::unique_ptr<Kept> kept;
  std::unique_ptr<WatchedTree> tree;
  BaselineSummary summary;

  // `attributes`: an untracked .gitattributes written in the root before
  // the baseline ("": none).
  explicit Fixture(const std::string& attributes = "") {
    InitGitLibrary();
    Run("mkdir " + root);
    Write(root + "/a.txt", "alpha\n");
    Write(root + "/b.txt", "bravo\n");
    Write(root + "/dirty.txt", "committed\n");
    int64_t newest = 0;
    for (const char* f : {"a.txt", "b.txt", "dirty.txt"}) newest = std::max(newest, CtimeOf(root + "/" + f));
    WaitForClockPast(tmp.path, newest);
    Run("cd " + root + " && git init -q . && git add -A && " + kGit + " commit -qm one");
    // Changed since git hashed it: not what the index says.
    Write(root + "/dirty.txt", "changed by hand\n");
    if (!attributes.empty()) Write(root + "/.gitattributes", attributes);
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
    BOOST_REQUIRE(BaselineObjects::Open(root, tmp.path + "/state", "S1", &objects).ok());
    kept = std::make_unique<Kept>(objects.get());
    WatchedTreeOptions o;
    o.root = root;
    o.kept = kept.get();
    o.clone = false;
    tree = std::make_unique<WatchedTree>(o, store.get());
    BOOST_REQUIRE(tree->Baseline(&summary).ok());
  }
  // Removes a.txt and b.txt from the repository's history and prunes:
  // afterwards only the baseline's ref names their blobs.
  void ForgetAndPrune() {
    Run("cd " + root + " && git rm -q --cached a.txt b.txt && rm a.txt && " + kGit + " commit -q --amend -m two && " + kGit +
        " reflog expire --expire=now --all && " + kGit + " gc -q --prune=now");
  }
  // The changes of one comparison of the whole tree, outside .git.
  std::vector<std::pair<ObservedChange, bool>> CatchAll() {
    std::vector<std::pair<ObservedChange, bool>> out;
    BOOST_REQUIRE(tree->Catch({{root, WatchHint::Scope::kAll}}, [&](const ObservedChange& c, bool nc) {
      if (PathRelativeTo(c.abs, root).rfind(".git", 0) != 0) out.emplace_back(c, nc);
      return Status::Ok();
    }).ok());
    return out;
  }
  std::string Content(const FileState& s) {
    if (s.blob.kind != BlobRef::Kind::kKey) return "<none>";
    std::string out;
    BOOST_REQUIRE(store->ReadToString(s.blob, &out).ok());
    return out;
  }
};

BOOST_AUTO_TEST_CASE(CleanTrackedFilesAreKeptByIdAndTheOthersCopied) {
  Fixture f;
  BOOST_TEST(f.summary.kept == 2u);  // a.txt, b.txt
  BOOST_TEST(f.summary.kept_bytes == 12u);
  BOOST_TEST(f.objects->found() == 2u);
  // dirty.txt (and .git's own files) copied.
  BOOST_TEST(f.summary.bytes_saved >= std::string("changed by hand\n").size());
  BOOST_TEST(Output("cd " + f.root + " && git show-ref") .find(BaselineRef("S1")) != std::string::npos);
  BOOST_TEST(f.objects->Unpin().ok());
  BOOST_TEST(Output("cd " + f.root + " && git show-ref").find(BaselineRef("S1")) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(AFileAFilterMayApplyToIsCopied) {
  // Even untracked, an attribute file names a filter for b.txt: its blob
  // need not be its bytes. Without any attribute file the per-path lookups
  // are skipped (the test above), with one they run.
  Fixture f("b.txt filter=secret\n");
  BOOST_TEST(f.summary.kept == 1u);  // a.txt only
  BOOST_TEST(f.objects->found() == 1u);
}

BOOST_AUTO_TEST_CASE(APreImageKeptByIdSurvivesTheCommandsGitGcPrune) {
  Fixture f;
  Write(f.root + "/b.txt", "bravo, rewritten\n");
  f.ForgetAndPrune();  // removes a.txt, and b.txt from the index
  auto changes = f.CatchAll();
  BOOST_REQUIRE(changes.size() == 2u);
  BOOST_TEST(PathRelativeTo(changes[0].first.abs, f.root) == "a.txt");
  BOOST_TEST((changes[0].first.after.type == FileType::kAbsent));
  BOOST_TEST(changes[0].second == false);
  BOOST_TEST(f.Content(changes[0].first.before) == "alpha\n");
  BOOST_TEST(PathRelativeTo(changes[1].first.abs, f.root) == "b.txt");
  BOOST_TEST(f.Content(changes[1].first.before) == "bravo\n");
  BOOST_TEST(f.Content(changes[1].first.after) == "bravo, rewritten\n");
}

BOOST_AUTO_TEST_CASE(WithoutThePinThePrunedPreImageIsLostAndSaidToBe) {
  Fixture f;
  Run("cd " + f.root + " && git update-ref -d " + BaselineRef("S1"));
  f.ForgetAndPrune();
  auto changes = f.CatchAll();
  BOOST_REQUIRE(changes.size() == 1u);  // a.txt
  BOOST_TEST((changes[0].first.after.type == FileType::kAbsent));
  BOOST_TEST(changes[0].second == true);  // before_not_captured
  BOOST_TEST(f.Content(changes[0].first.before) == "<none>");
}

}  // namespace
}  // namespace guard
