// The watch baseline file (session/watch_baseline.h): written from a
// WatchedTree and read back into another (WatchedTree::Resume), it compares
// the tree as the original does, with the same pre-images, the files kept
// by name only still flagged as such, and the directories guard never
// watches still left out. Recovery's catch-up (session/watch_catch_up.h)
// stands on it; its end-to-end twin is tests/e2e/watch_mode_test.cc
// (guard SIGKILLed in a watch session).
#define BOOST_TEST_MODULE watch_baseline
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/path_util.h"
#include "supervisor/session/watch_baseline.h"
#include "supervisor/watch/watched_tree.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

struct Fixture {
  testing::TempDir tmp{"guard-watch-baseline"};
  std::string root = tmp.path + "/root";
  std::string own = root + "/.guard-state";
  std::unique_ptr<BlobStore> store;

  Fixture() {
    fs::create_directories(root);
    fs::create_directories(own);
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  }
  std::string Abs(const std::string& rel) { return root + "/" + rel; }
  WatchedTreeOptions Options(uint64_t budget) {
    WatchedTreeOptions o;
    o.root = root;
    o.excluded = {own};
    o.baseline_budget = budget;
    return o;
  }
  // Every change a whole-tree Catch emits, as "rel:before>after[!]" words
  // ('!': the pre-image's content is not held), with the pre-image's content.
  std::string CatchAll(WatchedTree* tree) {
    std::ostringstream o;
    Status s = tree->Catch({{root, WatchHint::Scope::kAll}}, [&](const ObservedChange& c, bool not_captured) {
      o << PathRelativeTo(c.abs, root) << ":" << FileTypeName(c.before.type) << ">" << FileTypeName(c.after.type)
        << (not_captured ? "!" : "");
      if (c.before.blob.kind == BlobRef::Kind::kKey) {
        std::string content;
        BOOST_REQUIRE(store->ReadToString(c.before.blob, &content).ok());
        o << "(" << content << ")";
      }
      o << " ";
      return Status::Ok();
    });
    BOOST_TEST(s.ok(), s.ToString());
    return o.str();
  }
};

BOOST_AUTO_TEST_CASE(ABaselineReadBackComparesTheTreeAsTheOriginalDoes) {
  // Twice the same tree and the same changes: once compared by the tree
  // that took the baseline, once by one resumed from its file.
  std::string by_original, by_resumed;
  for (bool resumed : {false, true}) {
    Fixture f;
    fs::create_directories(f.Abs("src/deep"));
    Write(f.Abs("src/a"), "alpha");
    Write(f.Abs("src/deep/b"), "beta");
    Write(f.Abs("big"), "a file past the budget");
    Write(f.Abs("kept"), "kept");
    Write(f.own + "/journal", "guard's own");
    symlink("src/a", f.Abs("link").c_str());
    WatchedTree original(f.Options(/*budget=*/16), f.store.get());
    BaselineSummary summary;
    BOOST_REQUIRE(original.Baseline(&summary).ok());
    BOOST_TEST(summary.name_only == 1u);
    const std::string file = f.tmp.path + "/watch_baseline";
    BOOST_REQUIRE(WriteWatchBaseline(file, original, {f.own}).ok());
    struct stat st;
    BOOST_REQUIRE(stat(file.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0600u);

    Write(f.Abs("src/a"), "changed");
    fs::remove_all(f.Abs("src/deep"));
    Write(f.Abs("big"), "rewritten");
    fs::remove(f.Abs("link"));
    fs::create_directories(f.Abs("new"));
    Write(f.Abs("new/n"), "new");
    Write(f.own + "/journal", "changed too, never compared");

    if (!resumed) {
      by_original = f.CatchAll(&original);
      continue;
    }
    std::vector<WatchedTree::SavedPath> saved;
    std::vector<std::string> excluded, problems;
    BOOST_REQUIRE(ReadWatchBaseline(file, &saved, &excluded, &problems).ok());
    BOOST_TEST(problems.empty());
    BOOST_TEST(excluded == std::vector<std::string>{f.own});
    BOOST_TEST(saved.size() == original.size());
    WatchedTreeOptions o = f.Options(16);
    o.excluded = excluded;
    WatchedTree again(o, f.store.get());
    BOOST_REQUIRE(again.Resume(saved).ok());
    by_resumed = f.CatchAll(&again);
  }
  BOOST_TEST(by_original ==
             "src/deep/b:regular>absent(beta) src/deep:directory>absent link:symlink>absent "
             "big:regular>regular! new:absent>directory new/n:absent>regular src/a:regular>regular(alpha) ");
  BOOST_TEST(by_resumed == by_original);
}

// A file whose content another keeps (a clean tracked file's git blob,
// KeptContent): the file carries its id, and a tree resumed from it fetches
// the content when the file changed after the last save; without the
// keeper, that pre-image is flagged as not held, never taken as empty.
struct FakeKept : KeptContent {
  std::string content;  // what "kept" held at the baseline
  bool Find(const std::string& rel, const FileState&, std::string* id) override {
    if (rel != "kept") return false;
    *id = "blob-of-kept";
    return true;
  }
  Status Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size) override {
    if (id != "blob-of-kept") return Status::NotFound(id);
    *size = content.size();
    return store->PutBytes(content, key);
  }
  Status Pin() override { return Status::Ok(); }
};

BOOST_AUTO_TEST_CASE(AFileKeptByAnotherIdIsFetchedWhenResumed) {
  for (bool with_keeper : {true, false}) {
    Fixture f;
    Write(f.Abs("kept"), "kept at the baseline");
    FakeKept fake;
    fake.content = "kept at the baseline";
    WatchedTreeOptions o = f.Options(1 << 20);
    o.kept = &fake;
    WatchedTree original(o, f.store.get());
    BaselineSummary summary;
    BOOST_REQUIRE(original.Baseline(&summary).ok());
    BOOST_TEST(summary.kept == 1u);
    const std::string file = f.tmp.path + "/watch_baseline";
    BOOST_REQUIRE(WriteWatchBaseline(file, original, {f.own}).ok());
    Write(f.Abs("kept"), "changed after the last save");

    std::vector<WatchedTree::SavedPath> saved;
    std::vector<std::string> excluded, problems;
    BOOST_REQUIRE(ReadWatchBaseline(file, &saved, &excluded, &problems).ok());
    BOOST_REQUIRE_EQUAL(saved.size(), 1u);
    BOOST_TEST(saved[0].kept_id == "blob-of-kept");
    WatchedTreeOptions again_options = f.Options(1 << 20);
    again_options.kept = with_keeper ? &fake : nullptr;
    WatchedTree again(again_options, f.store.get());
    BOOST_REQUIRE(again.Resume(saved).ok());
    BOOST_TEST(f.CatchAll(&again) ==
               (with_keeper ? "kept:regular>regular(kept at the baseline) " : "kept:regular>regular! "));
  }
}

BOOST_AUTO_TEST_CASE(NoFileIsNotFound) {
  std::vector<WatchedTree::SavedPath> saved;
  std::vector<std::string> excluded, problems;
  Status s = ReadWatchBaseline("/nonexistent/watch_baseline", &saved, &excluded, &problems);
  BOOST_TEST(s.IsNotFound(), s.ToString());
}

}  // namespace
}  // namespace guard
