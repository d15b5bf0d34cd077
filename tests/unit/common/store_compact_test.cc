#define BOOST_TEST_MODULE store_compact
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "common/blob_store.h"
#include "common/store_compact.h"
#include "tests/unit/support/temp_dir.h"

namespace fs = std::filesystem;
using guard::BlobKey;
using guard::BlobRef;
using guard::BlobStore;
using guard::CompactReport;
using guard::CompactStore;
using guard::Status;
using guard::testing::TempDir;

namespace {

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "def function_" + std::to_string(s.size() % 977) + "(x):\n    return x + 1\n";
  s.resize(n);
  return s;
}

std::string Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A store that stores raw, as a session's does, with `content` put in it.
struct RawStore {
  TempDir dir;
  std::unique_ptr<BlobStore> store;
  RawStore() {
    BOOST_REQUIRE(BlobStore::Open(dir.path + "/store", &store).ok());
    store->SetCompress(false);
  }
  BlobKey Put(const std::string& content) {
    BlobKey key;
    BOOST_REQUIRE(store->PutBytes(content, &key).ok());
    return key;
  }
  std::string Raw(const BlobKey& k) const {
    return dir.path + "/store/objects/" + k.Hex().substr(0, 2) + "/" + k.Hex();
  }
  std::string Zst(const BlobKey& k) const { return Raw(k) + ".zst"; }
  std::string Read(const BlobKey& k) const {
    BlobRef ref;
    ref.kind = BlobRef::Kind::kKey;
    ref.key = k;
    std::string out;
    Status s = store->ReadToString(ref, &out);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    return out;
  }
};

int64_t MtimeNs(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ASessionsRawObjectsBecomeZstdAndReadTheSame) {
  RawStore s;
  const std::string text = Text(300 * 1024), noise = Random(100 * 1024, 7);
  BlobKey t = s.Put(text), n = s.Put(noise), e = s.Put("");
  BOOST_REQUIRE(fs::exists(s.Raw(t)));  // stored raw while the session ran
  BOOST_REQUIRE(!fs::exists(s.Zst(t)));
  int64_t before = MtimeNs(s.Raw(t));
  CompactReport r;
  Status st = CompactStore(s.dir.path + "/store", 0, &r);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_TEST(r.compressed == 1u);
  BOOST_TEST(r.left_raw == 2u);  // the noise (no gain) and the empty blob
  BOOST_TEST(!fs::exists(s.Raw(t)));
  BOOST_TEST(fs::exists(s.Zst(t)));
  BOOST_TEST(fs::file_size(s.Zst(t)) * 3 < text.size());
  BOOST_TEST(r.bytes_after < r.bytes_before);
  BOOST_TEST(MtimeNs(s.Zst(t)) == before);  // the sweep's age rule sees the same object
  BOOST_TEST(fs::exists(s.Raw(n)));
  BOOST_TEST(fs::exists(s.Raw(e)));
  BOOST_TEST(s.Read(t) == text);
  BOOST_TEST(s.Read(n) == noise);
  BOOST_TEST(fs::is_empty(s.dir.path + "/store/tmp"));
  // A second pass finds nothing more to do.
  BOOST_REQUIRE(CompactStore(s.dir.path + "/store", 0, &r).ok());
  BOOST_TEST(r.compressed == 0u);
}

BOOST_AUTO_TEST_CASE(OnlyObjectsChangedSinceTheLastPassAreLookedAt) {
  RawStore s;
  BlobKey t = s.Put(Text(50 * 1024));
  CompactReport r;
  BOOST_REQUIRE(CompactStore(s.dir.path + "/store", MtimeNs(s.Raw(t)) + 1, &r).ok());
  BOOST_TEST(r.compressed == 0u);
  BOOST_TEST(fs::exists(s.Raw(t)));
  BOOST_REQUIRE(CompactStore(s.dir.path + "/store", MtimeNs(s.Raw(t)), &r).ok());
  BOOST_TEST(r.compressed == 1u);
}

BOOST_AUTO_TEST_CASE(ADamagedRawObjectIsLeftForTheReaderToReport) {
  RawStore s;
  BlobKey t = s.Put(Text(40 * 1024));
  {
    std::fstream f(s.Raw(t), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('!');
  }
  CompactReport r;
  BOOST_REQUIRE(CompactStore(s.dir.path + "/store", 0, &r).ok());
  BOOST_TEST(r.compressed == 0u);
  BOOST_TEST(fs::exists(s.Raw(t)));
  BOOST_TEST(!fs::exists(s.Zst(t)));
  BlobRef ref;
  ref.kind = BlobRef::Kind::kKey;
  ref.key = t;
  std::string out;
  BOOST_TEST(s.store->ReadToString(ref, &out).IsCorruption());
}

BOOST_AUTO_TEST_CASE(ARawObjectWithAnotherLinkIsLeft) {
  // A pending blob resolved into an object shares its inode: compressing it
  // would keep the content twice until the pending name goes.
  RawStore s;
  BlobKey t = s.Put(Text(40 * 1024));
  BOOST_REQUIRE(::link(s.Raw(t).c_str(), (s.dir.path + "/other").c_str()) == 0);
  CompactReport r;
  BOOST_REQUIRE(CompactStore(s.dir.path + "/store", 0, &r).ok());
  BOOST_TEST(r.compressed == 0u);
  BOOST_TEST(fs::exists(s.Raw(t)));
}

BOOST_AUTO_TEST_CASE(AStoreThatCompressesWritesZstdAtOnce) {
  TempDir dir;
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(dir.path + "/store", &store).ok());
  BlobKey k;
  BOOST_REQUIRE(store->PutBytes(Text(40 * 1024), &k).ok());
  BOOST_TEST(fs::exists(dir.path + "/store/objects/" + k.Hex().substr(0, 2) + "/" + k.Hex() + ".zst"));
}
