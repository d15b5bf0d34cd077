// The sweep of the blob store and the retention plan: what is removed, what
// stays, and the rule that keeps a blob a running session is about to name.
#define BOOST_TEST_MODULE store_gc
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/blob_append_format.h"
#include "common/blob_store.h"
#include "common/blob_store_layout.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/retention.h"
#include "common/store_gc.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
std::ostream& operator<<(std::ostream& os, const BlobKey& k) { return os << k.Hex(); }
}  // namespace guard

namespace fs = std::filesystem;
using namespace guard;

namespace {

constexpr int64_t kHourNs = 3600LL * 1000000000;

struct StoreFixture {
  StoreFixture() {
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
  }
  BlobKey Put(const std::string& content) {
    BlobKey key;
    BOOST_REQUIRE(store->PutBytes(content, &key).ok());
    return key;
  }
  std::string ObjectPath(const BlobKey& key) { return store->ObjectPath(key); }
  // Sets the mtime of `path` (not following a symlink) to `ago_ns` ago.
  static void Age(const std::string& path, int64_t ago_ns) {
    int64_t t = WallNowNs() - ago_ns;
    struct timespec times[2] = {{t / 1000000000, t % 1000000000}, {t / 1000000000, t % 1000000000}};
    BOOST_REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
  }
  SweepReport Sweep(const StoreMarks& marks, int64_t cut_ns) {
    StoreInventory inv;
    BOOST_REQUIRE(TakeInventory(dir + "/store", &inv).ok());
    SweepOptions options;
    options.cut_ns = cut_ns;
    SweepReport report;
    BOOST_REQUIRE(SweepStore(dir + "/store", inv, marks, options, &report).ok());
    return report;
  }
  testing::TempDir tmp{"guard-gc-test"};
  const std::string& dir = tmp.path;
  std::unique_ptr<BlobStore> store;
};

BOOST_AUTO_TEST_CASE(UnmarkedBlobOlderThanTheCutIsSweptAndMarkedOneStays) {
  StoreFixture f;
  BlobKey kept = f.Put("kept\n"), dropped = f.Put("dropped\n");
  f.Age(f.ObjectPath(kept), kHourNs);
  f.Age(f.ObjectPath(dropped), kHourNs);
  StoreMarks marks;
  marks.keys.insert(kept.Hex());
  SweepReport r = f.Sweep(marks, WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 1u);
  BOOST_TEST(f.store->Contains(kept));
  BOOST_TEST(!f.store->Contains(dropped));
  BOOST_TEST(fs::is_empty(f.dir + "/store/trash"));
}

// An append object (blob_append_format.h) is read through its base: a
// sweep that keeps it keeps the base, which no session names itself, and
// one that removes it leaves the base for the next sweep.
BOOST_AUTO_TEST_CASE(AnAppendObjectKeepsItsBaseAlive) {
  StoreFixture f;
  const std::string v1(kAppendMinBase + 100, 'a'), v2 = v1 + "appended\n";
  BlobKey base = f.Put(v1);
  BOOST_REQUIRE(WriteFileAtomic(f.dir + "/log", v2, 0600).ok());
  UniqueFd fd;
  BOOST_REQUIRE(OpenFile(f.dir + "/log", O_RDONLY, 0, &fd).ok());
  BlobKey grown;
  bool appended = false;
  BOOST_REQUIRE(f.store->PutFdAfter(fd.get(), base, v1.size(), &grown, nullptr, &appended).ok());
  BOOST_REQUIRE(appended);
  f.Age(f.ObjectPath(base), kHourNs);
  f.Age(f.ObjectPath(grown), kHourNs);
  StoreInventory inv;
  BOOST_REQUIRE(TakeInventory(f.dir + "/store", &inv).ok());
  BOOST_TEST(inv.objects.count(grown.Hex()) == 1u);
  BOOST_TEST(inv.append_base[grown.Hex()] == base.Hex());

  StoreMarks marks;
  marks.keys.insert(grown.Hex());  // a session names the grown file alone
  SweepReport r = f.Sweep(marks, WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 0u);
  BOOST_TEST(f.store->Contains(base));
  BlobRef ref;
  ref.kind = BlobRef::Kind::kKey;
  ref.key = grown;
  std::string back;
  BOOST_REQUIRE(f.store->ReadToString(ref, &back).ok());
  BOOST_TEST((back == v2));

  // Nothing names either: the append object goes first, then its base.
  r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 1u);
  BOOST_TEST(!f.store->Contains(grown));
  BOOST_TEST(f.store->Contains(base));
  r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 1u);
  BOOST_TEST(!f.store->Contains(base));
}

BOOST_AUTO_TEST_CASE(UnmarkedBlobNewerThanTheCutStays) {
  StoreFixture f;
  BlobKey fresh = f.Put("written after the cut\n");
  SweepReport r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 0u);
  BOOST_TEST(r.kept_recent == 1u);
  BOOST_TEST(f.store->Contains(fresh));
}

// A session that stores content already in the store names the existing
// object in its next record. If a gc took its inventory and marks before
// that record, the object must survive the sweep anyway: the put refreshed it.
BOOST_AUTO_TEST_CASE(BlobStoredAgainAfterTheMarkSurvivesTheSweep) {
  StoreFixture f;
  BlobKey old = f.Put("content an old session saved\n");
  f.Age(f.ObjectPath(old), kHourNs);
  int64_t cut = WallNowNs() - 1000000000;
  StoreInventory inv;  // the gc's view, taken before the put
  BOOST_REQUIRE(TakeInventory(f.dir + "/store", &inv).ok());
  BOOST_TEST(f.Put("content an old session saved\n") == old);  // a running session's put: deduplicated
  SweepOptions options;
  options.cut_ns = cut;
  SweepReport r;
  BOOST_REQUIRE(SweepStore(f.dir + "/store", inv, StoreMarks(), options, &r).ok());
  BOOST_TEST(r.objects == 0u);
  BOOST_TEST(f.store->Contains(old));
}

BOOST_AUTO_TEST_CASE(KeepAliveRefreshesAnObjectAndReportsAMissingOne) {
  StoreFixture f;
  BlobKey key = f.Put("named again without a put\n");
  f.Age(f.ObjectPath(key), kHourNs);
  BOOST_TEST(f.store->KeepAlive(key).ok());
  SweepReport r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 0u);
  BOOST_TEST(f.store->KeepAlive(BlobKey::OfBytes("never stored")).IsNotFound());
}

// A session names a pending blob by its pending name; once resolved, the
// content lives in objects/ under its key and the marker says which.
BOOST_AUTO_TEST_CASE(MarkedPendingNameKeepsItsMarkerAndTheObjectItResolvedTo) {
  StoreFixture f;
  std::string file = f.dir + "/user-file";
  BOOST_REQUIRE(WriteFileAtomic(file, "adopted by link\n", 0644).ok());
  UniqueFd dirfd;
  BOOST_REQUIRE(OpenFile(f.dir, O_RDONLY | O_DIRECTORY, 0, &dirfd).ok());
  std::string pending;
  BOOST_REQUIRE(f.store->AdoptByLink(dirfd.get(), "user-file", &pending).ok());
  BOOST_REQUIRE(::unlink(file.c_str()) == 0);  // the delete it was adopted for
  BlobKey key;
  BOOST_REQUIRE(f.store->ResolvePending(pending, &key).ok());
  BOOST_REQUIRE(f.store->SyncWritten().ok());  // unlinks the pending name
  f.Age(f.ObjectPath(key), kHourNs);
  f.Age(f.dir + "/store/resolved/" + pending, kHourNs);
  StoreMarks marks;
  marks.pending.insert(pending);
  SweepReport r = f.Sweep(marks, WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 0u);
  BOOST_TEST(r.markers == 0u);
  std::string content;
  BlobRef ref;
  ref.kind = BlobRef::Kind::kPending;
  ref.pending = pending;
  BOOST_TEST(f.store->ReadToString(ref, &content).ok());
  BOOST_TEST(content == "adopted by link\n");
  // Unmarked, both go.
  r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.objects == 1u);
  BOOST_TEST(r.markers == 1u);
}

BOOST_AUTO_TEST_CASE(ObjectLeftInTrashByAKilledSweepIsPutBackWhenTheStoreOpens) {
  StoreFixture f;
  BlobKey key = f.Put("moved aside, then the sweep died\n");
  std::string object = f.ObjectPath(key);
  std::string trash = f.dir + "/store/trash/" + key.Hex();
  BOOST_REQUIRE(::rename(object.c_str(), trash.c_str()) == 0);
  BOOST_TEST(!f.store->Contains(key));
  std::unique_ptr<BlobStore> again;
  BOOST_REQUIRE(BlobStore::Open(f.dir + "/store", &again).ok());
  BOOST_TEST(again->Contains(key));
  BOOST_TEST(!fs::exists(trash));
}

BOOST_AUTO_TEST_CASE(StaleTemporaryFileOfADeadWriterIsSwept) {
  StoreFixture f;
  // pid 2^22 + 1 is above pid_max's largest value: never a live process.
  std::string temp = f.dir + "/store/tmp/4194305-0-deadbeef";
  BOOST_REQUIRE(WriteFileAtomic(temp, "half a blob", 0600).ok());
  f.Age(temp, 2 * kHourNs);
  std::string young = f.dir + "/store/tmp/4194305-1-deadbeef";
  BOOST_REQUIRE(WriteFileAtomic(young, "being written", 0600).ok());
  SweepReport r = f.Sweep(StoreMarks(), WallNowNs());
  BOOST_TEST(r.temps == 1u);
  BOOST_TEST(!fs::exists(temp));
  BOOST_TEST(fs::exists(young));
}

BOOST_AUTO_TEST_CASE(UnmarkedPendingBlobAdoptedBeforeTheCutIsSweptAndOneAdoptedAfterStays) {
  StoreFixture f;
  std::string file = f.dir + "/user-file";
  BOOST_REQUIRE(WriteFileAtomic(file, "adopted, never resolved\n", 0644).ok());
  UniqueFd dirfd;
  BOOST_REQUIRE(OpenFile(f.dir, O_RDONLY | O_DIRECTORY, 0, &dirfd).ok());
  std::string pending;
  BOOST_REQUIRE(f.store->AdoptByLink(dirfd.get(), "user-file", &pending).ok());
  // ctime dates the adoption (a session running since may still name it).
  SweepReport r = f.Sweep(StoreMarks(), WallNowNs() - 60LL * 1000000000);
  BOOST_TEST(r.pending == 0u);
  r = f.Sweep(StoreMarks(), WallNowNs() + 60LL * 1000000000);
  BOOST_TEST(r.pending == 1u);
  BOOST_TEST(!fs::exists(f.dir + "/store/pending/" + pending));
  BOOST_TEST(fs::exists(file));  // the user's name is untouched
}

// --- Retention plans over a made-up usage ---

StoreUsage ThreeSessionUsage() {
  // Inodes: 0 only s1's, 1 shared by s1 and s2, 2 only s3's; 100 bytes each.
  StoreUsage u;
  u.inode_bytes = {100, 100, 100};
  u.inode_mtime_ns = {0, 0, 0};
  u.inode_refs = {1, 2, 1};
  int64_t day = 86400LL * 1000000000;
  auto add = [&](const char* id, const char* root, int64_t ended, std::vector<size_t> inodes) {
    SessionUsage s;
    s.id = id;
    s.root = root;
    s.started_ns = s.ended_ns = ended;
    s.dir_bytes = 10;
    s.inodes = std::move(inodes);
    u.sessions.push_back(s);
  };
  add("20260101-000000-0000000", "/a", 10 * day, {0, 1});
  add("20260102-000000-0000000", "/a", 20 * day, {1});
  add("20260103-000000-0000000", "/b", 30 * day, {2});
  u.store_bytes = 300;
  u.sessions_bytes = 30;
  return u;
}

BOOST_AUTO_TEST_CASE(PolicyRemovesOldSessionsOldestFirstAndKeepsTheNewestOfEachRoot) {
  StoreUsage u = ThreeSessionUsage();
  ProtectNewest(1, &u);
  RetentionPolicy p;
  p.keep_ns = 5LL * 86400 * 1000000000;
  p.max_bytes = 1ULL << 40;
  p.keep_newest = 1;
  int64_t now = 40LL * 86400 * 1000000000;
  RetentionPlan plan = PlanRetention(u, p, now, now);
  BOOST_TEST(plan.remove == std::vector<std::string>{"20260101-000000-0000000"});
  // Removing s1 frees its directory and inode 0; inode 1 is still s2's.
  BOOST_TEST(plan.total_after == 330u - 10u - 100u);
}

BOOST_AUTO_TEST_CASE(SizeCapRemovesOldestUntilWithinAndSharedContentCountsOnlyOnceFreed) {
  StoreUsage u = ThreeSessionUsage();
  RetentionPolicy p;
  p.keep_ns = 1000LL * 86400 * 1000000000;
  p.max_bytes = 120;
  p.keep_newest = 0;
  int64_t now = 40LL * 86400 * 1000000000;
  RetentionPlan plan = PlanRetention(u, p, now, now);
  // s1 alone frees 110 (330 -> 220); s2 then frees the shared inode (-> 110).
  BOOST_TEST(plan.remove.size() == 2u);
  BOOST_TEST(plan.total_after == 110u);
  BOOST_TEST(plan.within_policy_after);
}

BOOST_AUTO_TEST_CASE(ProtectedSessionsAreNeverPlannedForRemoval) {
  StoreUsage u = ThreeSessionUsage();
  u.sessions[0].protection = Protection::kRunning;
  u.sessions[1].protection = Protection::kNeedsRecovery;
  u.sessions[2].protection = Protection::kUnreadable;
  RetentionPolicy p;
  p.keep_ns = 0;
  p.max_bytes = 0;
  p.keep_newest = 0;
  RetentionPlan plan = PlanRetention(u, p, 1LL << 62, 1LL << 62);
  BOOST_TEST(plan.remove.empty());
  BOOST_TEST(!plan.within_policy_after);
}

BOOST_AUTO_TEST_CASE(SessionIdTimeIsItsStartInUtc) {
  // docs/format.md's example: started 2026-11-30T20:30:12.123Z.
  BOOST_TEST(SessionIdTimeNs("20261130-203012-1234f9a") == 1796070612123000000LL);
  BOOST_TEST(SessionIdTimeNs("not-an-id") == 0);
}

}  // namespace
