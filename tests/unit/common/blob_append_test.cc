// Append objects (common/blob_append_format.h, docs/format.md Part II,
// "Append objects"): a file that grew is stored as its last version and the
// new bytes, read back whole under its own key, refused when damaged, and
// never made where the file did not only grow.
#define BOOST_TEST_MODULE blob_append
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "common/blob_append_format.h"
#include "common/blob_store.h"
#include "common/file_io.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
std::ostream& operator<<(std::ostream& os, const BlobKey& k) { return os << k.Hex(); }
}  // namespace guard

namespace fs = std::filesystem;
using namespace guard;

namespace {

struct AppendFixture {
  AppendFixture() {
    Status s = BlobStore::Open(tmp.path + "/store", &store);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }
  // Writes `content` to the test's file and stores it after `base`.
  BlobKey PutAfter(const std::string& content, const BlobKey& base, uint64_t base_size, bool* appended) {
    BOOST_REQUIRE(WriteFileAtomic(tmp.File("log"), content, 0600).ok());
    UniqueFd fd;
    BOOST_REQUIRE(OpenFile(tmp.File("log"), O_RDONLY, 0, &fd).ok());
    BlobKey key;
    uint64_t size = 0;
    Status s = store->PutFdAfter(fd.get(), base, base_size, &key, &size, appended);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    BOOST_TEST(size == content.size());
    return key;
  }
  std::string Read(const BlobKey& key, Status* status = nullptr) {
    BlobRef ref;
    ref.kind = BlobRef::Kind::kKey;
    ref.key = key;
    std::string out;
    Status s = store->ReadToString(ref, &out);
    if (status) *status = s;
    else BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    return out;
  }
  std::string Version() {
    std::string v;
    BOOST_REQUIRE(ReadFileToString(tmp.path + "/store/VERSION", &v).ok());
    return v;
  }
  testing::TempDir tmp{"guard-append-test"};
  std::unique_ptr<BlobStore> store;
};

std::string Lines(size_t bytes, const std::string& tag) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) s += tag + " line " + std::to_string(i) + "\n";
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(AGrownFileIsStoredAsItsBaseAndTheAppendedBytes, AppendFixture) {
  const std::string v1 = Lines(kAppendMinBase + 1000, "a");
  BlobKey k1;
  BOOST_REQUIRE(store->PutBytes(v1, &k1).ok());
  BOOST_TEST(Version() == "1\n");  // no append object yet: older guards still read the store
  const std::string v2 = v1 + Lines(5000, "b");
  bool appended = false;
  BlobKey k2 = PutAfter(v2, k1, v1.size(), &appended);
  BOOST_TEST(appended);
  BOOST_TEST(k2 == BlobKey::OfBytes(v2));  // the key is the whole content's
  const std::string path = store->ObjectPath(k2);
  BOOST_TEST(EndsWith(path, ".app"));
  BOOST_TEST(fs::file_size(path) == kAppendHeaderSize + (v2.size() - v1.size()));
  BOOST_TEST(Read(k2) == v2);
  BOOST_TEST(Version() == "2\n");

  // A chain: the next append names the append object as its base.
  const std::string v3 = v2 + Lines(3000, "c");
  BlobKey k3 = PutAfter(v3, k2, v2.size(), &appended);
  BOOST_TEST(appended);
  BOOST_TEST(Read(k3) == v3);
  // Restores go through ReadToNewFile: whole content there too.
  UniqueFd out;
  BOOST_REQUIRE(OpenFile(tmp.File("restored"), O_WRONLY | O_CREAT | O_EXCL, 0600, &out).ok());
  BlobRef ref;
  ref.kind = BlobRef::Kind::kKey;
  ref.key = k3;
  uint64_t size = 0;
  BOOST_REQUIRE(store->ReadToNewFile(ref, out.get(), &size).ok());
  std::string restored;
  BOOST_REQUIRE(ReadFileToString(tmp.File("restored"), &restored).ok());
  BOOST_TEST(restored == v3);
}

BOOST_FIXTURE_TEST_CASE(AFileThatDidNotOnlyGrowIsStoredWhole, AppendFixture) {
  const std::string v1 = Lines(kAppendMinBase + 1000, "a");
  BlobKey k1;
  BOOST_REQUIRE(store->PutBytes(v1, &k1).ok());
  std::string changed = v1 + "tail\n";
  changed[10] = 'X';  // rewritten inside the base's range
  bool appended = true;
  BlobKey k = PutAfter(changed, k1, v1.size(), &appended);
  BOOST_TEST(!appended);
  BOOST_TEST(!EndsWith(store->ObjectPath(k), ".app"));
  BOOST_TEST(Read(k) == changed);
  // Shorter than the base: whole too.
  k = PutAfter(v1.substr(0, v1.size() - 7), k1, v1.size(), &appended);
  BOOST_TEST(!appended);
  BOOST_TEST(Read(k) == v1.substr(0, v1.size() - 7));
  // A small base is not chained.
  BlobKey small;
  BOOST_REQUIRE(store->PutBytes("short\n", &small).ok());
  k = PutAfter("short\nlonger\n", small, 6, &appended);
  BOOST_TEST(!appended);
  BOOST_TEST(Version() == "1\n");
}

// The depth of `key`'s object: 0 for a whole one, else its header's.
uint32_t DepthOf(BlobStore* store, const BlobKey& key) {
  const std::string path = store->ObjectPath(key);
  if (!EndsWith(path, ".app")) return 0;
  std::string raw;
  BOOST_REQUIRE(ReadFileToString(path, &raw).ok());
  AppendHeader h;
  BOOST_REQUIRE(DecodeAppendHeader(raw.data(), &h));
  return h.depth;
}

// Bytes of every append object in the store.
uint64_t AppendBytes(const std::string& store_dir) {
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(store_dir + "/objects")) {
    if (e.path().extension() == ".app") total += fs::file_size(e.path());
  }
  return total;
}

// A log opened with `>>` 300 times: each version is stored after the last
// one, and the writer picks the base in its chain so that the chain stays
// shallow and each appended byte is stored about log2(versions) times, not
// once per later version, and never starts again with a whole copy.
BOOST_FIXTURE_TEST_CASE(ManyVersionsOfAGrowingFileStayShallowAndSmall, AppendFixture) {
  std::string content = Lines(kAppendMinBase + 10, "base");
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes(content, &key).ok());
  const size_t base_size = content.size();
  uint32_t deepest = 0;
  for (int i = 1; i <= 300; ++i) {
    const std::string longer = content + "line " + std::to_string(i) + "\n";
    bool appended = false;
    BlobKey next = PutAfter(longer, key, content.size(), &appended);
    BOOST_TEST(appended, "version " << i << " was stored whole");
    deepest = std::max(deepest, DepthOf(store.get(), next));
    key = next;
    content = longer;
    if (i % 50 == 0) BOOST_TEST(Read(key) == content);
  }
  BOOST_TEST(Read(key) == content);
  const uint64_t appended_bytes = content.size() - base_size;
  BOOST_TEST(deepest <= 10u, "a chain " << deepest << " deep");  // log2(300) + 1
  // Each byte about log2(300) times, plus a header per version; a copy of
  // every byte appended before, per version, would be 150 times as much.
  BOOST_TEST(AppendBytes(tmp.path + "/store") <= 10 * appended_bytes + 300 * kAppendHeaderSize,
             AppendBytes(tmp.path + "/store") << " bytes for " << appended_bytes << " appended");
}

// Appends that halve each time would each extend the one before, one
// deeper each time: at depth kAppendMaxDepth the writer goes down the
// chain instead, and the object is still an append object.
BOOST_FIXTURE_TEST_CASE(AChainAtTheMaximumDepthGoesOnFromAShallowerBase, AppendFixture) {
  std::string content = Lines(kAppendMinBase + 10, "base");
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes(content, &key).ok());
  size_t add = size_t{1} << 20;
  for (uint32_t i = 1; i <= kAppendMaxDepth + 3; ++i) {
    const std::string longer = content + std::string(add, static_cast<char>('a' + i % 26));
    bool appended = false;
    BlobKey next = PutAfter(longer, key, content.size(), &appended);
    BOOST_TEST(appended, "version " << i << " was stored whole");
    const uint32_t depth = DepthOf(store.get(), next);
    BOOST_TEST(depth <= kAppendMaxDepth);
    if (i <= kAppendMaxDepth) BOOST_TEST(depth == i);
    key = next;
    content = longer;
    add = std::max<size_t>(add / 2, 1);
  }
  BOOST_TEST(Read(key) == content);
}

BOOST_FIXTURE_TEST_CASE(AnAppendObjectWithAMissingOrDamagedBaseIsReportedNeverMisread, AppendFixture) {
  const std::string v1 = Lines(kAppendMinBase + 1000, "a");
  BlobKey k1;
  BOOST_REQUIRE(store->PutBytes(v1, &k1).ok());
  bool appended = false;
  BlobKey k2 = PutAfter(v1 + "more\n", k1, v1.size(), &appended);
  BOOST_REQUIRE(appended);
  const std::string app = store->ObjectPath(k2);

  // A header of a newer format: refused, not read as bytes.
  std::string saved;
  BOOST_REQUIRE(ReadFileToString(app, &saved).ok());
  std::string newer = saved;
  newer[8] = static_cast<char>(kAppendFormatVersion + 1);
  BOOST_REQUIRE(WriteFileAtomic(app, newer, 0600).ok());
  Status s;
  Read(k2, &s);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  BOOST_TEST(s.message().find("not an append object this guard reads") != std::string::npos, s.ToString());

  // An append object naming itself as its base: a loop, refused.
  std::string loop = saved;
  AppendHeader h;
  BOOST_REQUIRE(DecodeAppendHeader(saved.data(), &h));
  h.base = k2;
  loop.replace(0, kAppendHeaderSize, EncodeAppendHeader(h));
  BOOST_REQUIRE(WriteFileAtomic(app, loop, 0600).ok());
  Read(k2, &s);
  BOOST_TEST(s.IsCorruption(), s.ToString());

  // The base gone: corruption of the append object, naming the base.
  BOOST_REQUIRE(WriteFileAtomic(app, saved, 0600).ok());
  BOOST_TEST(Read(k2) == v1 + "more\n");
  fs::remove(store->ObjectPath(k1));
  Read(k2, &s);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  BOOST_TEST(s.message().find(k1.Hex()) != std::string::npos, s.ToString());
}
