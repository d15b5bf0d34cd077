// WatchedTree: a hinted name compared with its saved state gives the change
// from that state to the one now, with content in the store, in an order
// that undoing in reverse puts back; names not hinted are not looked at; the
// baseline's budget keeps the largest files by name only.
#define BOOST_TEST_MODULE watched_tree
#include <boost/test/unit_test.hpp>

#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/path_util.h"
#include "supervisor/watch/watched_tree.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using Scope = WatchHint::Scope;

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string Content(BlobStore* store, const FileState& s) {
  if (s.blob.kind != BlobRef::Kind::kKey) return "<none>";
  std::string out;
  BOOST_REQUIRE(store->ReadToString(s.blob, &out).ok());
  return out;
}

struct Fixture {
  testing::TempDir tmp{"guard-watched-tree"};
  std::string root = tmp.path + "/root";
  bool clone = true;
  std::unique_ptr<BlobStore> store;
  std::unique_ptr<WatchedTree> tree;
  std::vector<ObservedChange> changes;
  std::vector<bool> not_captured;

  Fixture() {
    fs::create_directories(root);
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  }
  void Baseline(uint64_t budget = UINT64_MAX, std::vector<std::string> excluded = {}) {
    WatchedTreeOptions o;
    o.root = root;
    o.clone = clone;
    o.excluded = std::move(excluded);
    o.baseline_budget = budget;
    tree = std::make_unique<WatchedTree>(o, store.get());
    BaselineSummary summary;
    BOOST_REQUIRE(tree->Baseline(&summary).ok());
    last_summary = summary;
  }
  std::string Abs(const std::string& rel) { return root + "/" + rel; }
  // The changes one Catch of `hints` emits, as "rel:before>after" words.
  std::string Catch(const std::vector<WatchHint>& hints, std::vector<WatchHint>* deferred = nullptr) {
    changes.clear();
    not_captured.clear();
    Status s = tree->Catch(hints, [this](const ObservedChange& c, bool nc) {
      changes.push_back(c);
      not_captured.push_back(nc);
      return Status::Ok();
    }, deferred);
    BOOST_TEST(s.ok(), s.ToString());
    std::ostringstream o;
    for (const ObservedChange& c : changes) {
      o << PathRelativeTo(c.abs, root) << ":" << FileTypeName(c.before.type) << ">" << FileTypeName(c.after.type)
        << " ";
    }
    return o.str();
  }
  BaselineSummary last_summary;
};

BOOST_AUTO_TEST_CASE(AModifiedFileGivesItsSavedContentAsPreImageAndItsNewAsPostImage) {
  Fixture f;
  Write(f.Abs("a"), "one");
  f.Baseline();
  Write(f.Abs("a"), "two!");
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular ");
  BOOST_TEST(Content(f.store.get(), f.changes[0].before) == "one");
  BOOST_TEST(Content(f.store.get(), f.changes[0].after) == "two!");
  // The next change's pre-image is this one's post-image.
  Write(f.Abs("a"), "three");
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular ");
  BOOST_TEST(Content(f.store.get(), f.changes[0].before) == "two!");
  // Looked at again unchanged: nothing.
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "");
}

BOOST_AUTO_TEST_CASE(AFileReadAMomentAgoWaitsForALaterRoundUnlessNothingMayWait) {
  Fixture f;
  Write(f.Abs("log"), "1");
  f.Baseline();
  Write(f.Abs("log"), "12");
  BOOST_TEST(f.Catch({{f.Abs("log"), Scope::kPath}}) == "log:regular>regular ");
  // Written again at once: a round that may defer leaves it for later...
  Write(f.Abs("log"), "123");
  std::vector<WatchHint> deferred;
  BOOST_TEST(f.Catch({{f.Abs("log"), Scope::kPath}}, &deferred) == "");
  BOOST_REQUIRE(deferred.size() == 1u);
  BOOST_TEST(deferred[0].path == f.Abs("log"));
  // ...and a Barrier's round reads it now.
  BOOST_TEST(f.Catch(deferred) == "log:regular>regular ");
  std::string content;
  BOOST_REQUIRE(f.store->ReadToString(f.changes[0].after.blob, &content).ok());
  BOOST_TEST(content == "123");
}

BOOST_AUTO_TEST_CASE(ANameNotHintedIsNotLookedAt) {
  Fixture f;
  Write(f.Abs("a"), "one");
  Write(f.Abs("b"), "one");
  f.Baseline();
  Write(f.Abs("a"), "two");
  Write(f.Abs("b"), "two");
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular ");
  BOOST_TEST(f.Catch({{f.root, Scope::kAll}}) == "b:regular>regular ");
}

BOOST_AUTO_TEST_CASE(AFileTouchedOrRewrittenWithWhatItHeldIsNoChange) {
  Fixture f;
  Write(f.Abs("a"), "same");
  f.Baseline();
  Write(f.Abs("a"), "same");
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "");
  chmod(f.Abs("a").c_str(), 0600);
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular ");
  BOOST_TEST(f.changes[0].after.mode == 0600u);
}

// A write through one name changes the other names of the file, which get
// no event of their own (inotify reports the name written through): they
// are compared with it. The e2e twin: restore_scenario_test
// UndoRestoresBothNamesOfAHardLinkedFile under --mode watch.
BOOST_AUTO_TEST_CASE(AWriteThroughOneNameOfAHardLinkedFileIsSeenAtItsOtherNames) {
  Fixture f;
  fs::create_directories(f.Abs("sub"));
  Write(f.Abs("a"), "one");
  BOOST_REQUIRE(link(f.Abs("a").c_str(), f.Abs("b").c_str()) == 0);
  BOOST_REQUIRE(link(f.Abs("a").c_str(), f.Abs("sub/c").c_str()) == 0);
  Write(f.Abs("beside"), "not linked");
  f.Baseline();
  std::ofstream(f.Abs("a"), std::ios::binary | std::ios::app) << "two";
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular b:regular>regular sub/c:regular>regular ");
  for (const ObservedChange& c : f.changes) {
    BOOST_TEST(Content(f.store.get(), c.before) == "one");
    BOOST_TEST(Content(f.store.get(), c.after) == "onetwo");
  }
  // Each name was saved: nothing is left to compare.
  BOOST_TEST(f.Catch({{f.root, Scope::kAll}}) == "");
}

BOOST_AUTO_TEST_CASE(ATreeRemovedIsRemovedDeepestFirst) {
  Fixture f;
  fs::create_directories(f.Abs("d/e"));
  Write(f.Abs("d/e/x"), "x");
  Write(f.Abs("d/y"), "y");
  Write(f.Abs("d-z"), "beside");
  f.Baseline();
  fs::remove_all(f.Abs("d"));
  BOOST_TEST(f.Catch({{f.Abs("d"), Scope::kTree}}) == "d/y:regular>absent d/e/x:regular>absent d/e:directory>absent d:directory>absent ");
  BOOST_TEST(Content(f.store.get(), f.changes[0].before) == "y");
  BOOST_TEST(f.tree->Saved("d-z") != nullptr);
  BOOST_TEST(f.tree->Saved("d/e") == nullptr);
}

BOOST_AUTO_TEST_CASE(ADirectoryHintedAsAPathIsComparedAsATree) {
  // inotify says "d removed" once, not each name below it.
  Fixture f;
  fs::create_directories(f.Abs("d"));
  Write(f.Abs("d/x"), "x");
  f.Baseline();
  fs::remove_all(f.Abs("d"));
  BOOST_TEST(f.Catch({{f.Abs("d"), Scope::kPath}}) == "d/x:regular>absent d:directory>absent ");
}

BOOST_AUTO_TEST_CASE(ANewTreeIsCreatedParentsFirstWithWhatWasMadeInItBeforeAnyWatch) {
  Fixture f;
  f.Baseline();
  fs::create_directories(f.Abs("n/m"));
  Write(f.Abs("n/m/deep"), "deep");
  Write(f.Abs("n/top"), "top");
  symlink("top", f.Abs("n/link").c_str());
  BOOST_TEST(f.Catch({{f.Abs("n"), Scope::kTree}}) ==
             "n:absent>directory n/link:absent>symlink n/m:absent>directory n/m/deep:absent>regular n/top:absent>regular ");
  BOOST_TEST(Content(f.store.get(), f.changes[3].after) == "deep");
  BOOST_TEST(f.changes[1].after.symlink_target == "top");
}

BOOST_AUTO_TEST_CASE(ATypeChangeRemovesWhatWasBelowFirst) {
  Fixture f;
  fs::create_directories(f.Abs("t"));
  Write(f.Abs("t/x"), "x");
  f.Baseline();
  fs::remove_all(f.Abs("t"));
  Write(f.Abs("t"), "now a file");
  BOOST_TEST(f.Catch({{f.Abs("t"), Scope::kPath}}) == "t/x:regular>absent t:directory>regular ");
}

BOOST_AUTO_TEST_CASE(ADirectoryRenamedIsARemovalAndACreation) {
  Fixture f;
  fs::create_directories(f.Abs("old"));
  Write(f.Abs("old/x"), "x");
  f.Baseline();
  fs::rename(f.Abs("old"), f.Abs("new"));
  BOOST_TEST(f.Catch({{f.Abs("new"), Scope::kTree}, {f.Abs("old"), Scope::kTree}}) ==
             "new:absent>directory new/x:absent>regular old/x:regular>absent old:directory>absent ");
  // The same content, by the same key.
  BOOST_TEST((f.changes[1].after.blob == f.changes[2].before.blob));
}

BOOST_AUTO_TEST_CASE(ASymlinkSwappedInForADirectoryIsNotFollowed) {
  Fixture f;
  testing::TempDir outside{"guard-watched-outside"};
  Write(outside.File("secret"), "secret");
  fs::create_directories(f.Abs("d"));
  Write(f.Abs("d/secret"), "mine");
  f.Baseline();
  fs::remove_all(f.Abs("d"));
  symlink(outside.path.c_str(), f.Abs("d").c_str());
  BOOST_TEST(f.Catch({{f.Abs("d/secret"), Scope::kPath}, {f.Abs("d"), Scope::kTree}}) ==
             "d/secret:regular>absent d:directory>symlink ");
}

BOOST_AUTO_TEST_CASE(TheBaselineBudgetKeepsTheLargestFilesByNameOnly) {
  Fixture f;
  Write(f.Abs("small1"), std::string(10, 'a'));
  Write(f.Abs("small2"), std::string(20, 'b'));
  Write(f.Abs("large"), std::string(100, 'c'));
  f.Baseline(/*budget=*/50);
  BOOST_TEST(f.last_summary.files == 3u);
  BOOST_TEST(f.last_summary.name_only == 1u);
  BOOST_TEST(f.last_summary.name_only_bytes == 100u);
  BOOST_TEST(f.last_summary.bytes_saved == 30u);
  Write(f.Abs("large"), "changed");
  Write(f.Abs("small1"), "changed");
  BOOST_TEST(f.Catch({{f.root, Scope::kAll}}) == "large:regular>regular small1:regular>regular ");
  BOOST_TEST(f.not_captured[0] == true);
  BOOST_TEST(f.not_captured[1] == false);
  BOOST_TEST(Content(f.store.get(), f.changes[0].after) == "changed");
  // Its post-image has content: the next change has a pre-image.
  Write(f.Abs("large"), "again");
  BOOST_TEST(f.Catch({{f.Abs("large"), Scope::kPath}}) == "large:regular>regular ");
  BOOST_TEST(f.not_captured[0] == false);
}

BOOST_AUTO_TEST_CASE(GuardsOwnDirectoriesAreNeverWalkedNorReported) {
  Fixture f;
  fs::create_directories(f.Abs("state/sessions"));
  Write(f.Abs("state/sessions/j"), "journal");
  f.Baseline(UINT64_MAX, {f.Abs("state")});
  BOOST_TEST(f.tree->Saved("state") == nullptr);
  Write(f.Abs("state/sessions/j"), "more");
  Write(f.Abs("state/new"), "x");
  BOOST_TEST(f.Catch({{f.root, Scope::kAll}}) == "");
  BOOST_TEST(f.Catch({{f.Abs("state/new"), Scope::kPath}}) == "");
}

// Clones need a filesystem that makes them: an XFS image with reflink,
// loop-mounted in a private mount namespace of this test process (root,
// xfsprogs). Where that cannot be, the test says why it did not run.
struct CanMakeXfs {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    std::string why;
    if (geteuid() != 0) why = "loop-mounting an XFS image needs root";
    else if (std::system("command -v mkfs.xfs >/dev/null 2>&1") != 0) why = "no mkfs.xfs (apt-get install xfsprogs)";
    boost::test_tools::assertion_result r(why.empty());
    if (!r) r.message() << "skipped: " << why;
    return r;
  }
};

struct XfsMount {
  testing::TempDir tmp{"guard-watched-tree-xfs"};
  std::string dir = tmp.path + "/mnt";
  bool mounted = false;
  XfsMount() {
    fs::create_directories(dir);
    BOOST_REQUIRE_MESSAGE(unshare(CLONE_NEWNS) == 0, "unshare(CLONE_NEWNS): " << strerror(errno));
    BOOST_REQUIRE(mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0);
    const std::string image = tmp.path + "/xfs.img";
    { std::ofstream(image, std::ios::binary); }
    BOOST_REQUIRE(::truncate(image.c_str(), 320 << 20) == 0);
    const std::string mkfs = "mkfs.xfs -q -m reflink=1 " + image + " 2>&1";
    BOOST_REQUIRE_MESSAGE(std::system(mkfs.c_str()) == 0, "mkfs.xfs -m reflink=1 failed");
    const std::string mnt = "mount -o loop " + image + " " + dir + " 2>&1";
    BOOST_REQUIRE_MESSAGE(std::system(mnt.c_str()) == 0, "the kernel refused `" << mnt << "` (see above)");
    mounted = true;
  }
  ~XfsMount() {
    if (mounted) umount2(dir.c_str(), MNT_DETACH);
  }
};

// Whether the first extent of `path` is shared with another file (a clone's
// blocks are its source's until either is written).
bool FirstExtentShared(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(struct fiemap) char buf[sizeof(struct fiemap) + sizeof(struct fiemap_extent)] = {};
  auto* map = reinterpret_cast<struct fiemap*>(buf);
  map->fm_length = FIEMAP_MAX_OFFSET;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = 1;
  const bool ok = ioctl(fd, FS_IOC_FIEMAP, map) == 0 && map->fm_mapped_extents == 1;
  close(fd);
  return ok && (map->fm_extents[0].fe_flags & FIEMAP_EXTENT_SHARED) != 0;
}

size_t PendingCount(const std::string& store) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(store + "/pending")) n += e.is_regular_file() ? 1 : 0;
  return n;
}

BOOST_AUTO_TEST_CASE(OnAFilesystemThatClonesTheBaselineClonesEveryFileAndCopiesNone,
                     *boost::unit_test::precondition(CanMakeXfs())) {
  XfsMount xfs;
  // The tree and the store on the XFS mount (a clone cannot cross filesystems).
  Fixture f;
  f.root = xfs.dir + "/root";
  fs::create_directories(f.root);
  BOOST_REQUIRE(BlobStore::Open(xfs.dir + "/store", &f.store).ok());
  const std::string big(256 * 1024, 'b');
  Write(f.Abs("a"), "one");
  Write(f.Abs("big"), big);
  Write(f.Abs("c"), "unchanged");
  // A budget smaller than any file: copies would keep them by name only.
  f.Baseline(/*budget=*/1);
  BOOST_TEST(f.last_summary.clone_error == "");
  BOOST_TEST(f.last_summary.files == 3u);
  BOOST_TEST(f.last_summary.cloned == 3u);
  BOOST_TEST(f.last_summary.cloned_bytes == 3u + big.size() + 9u);
  BOOST_TEST(f.last_summary.bytes_saved == 0u);
  BOOST_TEST(f.last_summary.name_only == 0u);
  BOOST_TEST(PendingCount(xfs.dir + "/store") == 3u);
  BOOST_REQUIRE(f.tree->Saved("big") != nullptr);
  const FileState big_saved = *f.tree->Saved("big");
  BOOST_REQUIRE(big_saved.blob.kind == BlobRef::Kind::kPending);
  BOOST_TEST(FirstExtentShared(xfs.dir + "/store/pending/" + big_saved.blob.pending));

  // A change: its pre-image is the clone, which holds what the file held.
  Write(f.Abs("a"), "two");
  BOOST_TEST(f.Catch({{f.Abs("a"), Scope::kPath}}) == "a:regular>regular ");
  BOOST_REQUIRE(f.changes[0].before.blob.kind == BlobRef::Kind::kPending);
  std::string was;
  BOOST_REQUIRE(f.store->ReadToString(f.changes[0].before.blob, &was).ok());
  BOOST_TEST(was == "one");
  BOOST_TEST(Content(f.store.get(), f.changes[0].after) == "two");
  // Rewritten with what it held: no change, and its clone is let go.
  Write(f.Abs("big"), big);
  BOOST_TEST(f.Catch({{f.Abs("big"), Scope::kPath}}) == "");
  BOOST_TEST(PendingCount(xfs.dir + "/store") == 2u);
  // At the end, the clones no change named go too (c's); a's stays for its record.
  f.tree->DropUnusedClones();
  BOOST_TEST(PendingCount(xfs.dir + "/store") == 1u);
  f.tree.reset();
  f.store.reset();
}

// $TMPDIR on ext4 or tmpfs, neither of which clones.
struct TmpCannotClone {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) {
    testing::TempDir probe{"guard-watched-tree-fs"};
    struct statfs st {};
    boost::test_tools::assertion_result r(statfs(probe.path.c_str(), &st) == 0 &&
                                          (st.f_type == 0xEF53 || st.f_type == 0x01021994));
    if (!r) r.message() << "skipped: $TMPDIR is on neither ext4 nor tmpfs";
    return r;
  }
};

BOOST_AUTO_TEST_CASE(WhereTheFilesystemCannotCloneTheBaselineCopiesAndSaysWhy,
                     *boost::unit_test::precondition(TmpCannotClone())) {
  Fixture f;
  Write(f.Abs("a"), "one");
  Write(f.Abs("b"), "two");
  f.Baseline();
  BOOST_TEST(f.last_summary.cloned == 0u);
  BOOST_TEST(f.last_summary.bytes_saved == 6u);
  BOOST_TEST(f.last_summary.clone_error != "");
  BOOST_TEST(PendingCount(f.tmp.path + "/store") == 0u);
}

}  // namespace
}  // namespace guard
