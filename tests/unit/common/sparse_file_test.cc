// Holes (common/sparse_file.h, docs/format.md Part II, "Holes"): a sparse
// file is stored and restored with its holes, under the key of its logical
// content, and any content survives the sparse writer byte for byte.
#define BOOST_TEST_MODULE sparse_file
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <string>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "common/sparse_file.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
std::ostream& operator<<(std::ostream& os, const BlobKey& k) { return os << k.Hex(); }
}  // namespace guard

using namespace guard;

namespace {

constexpr off_t kLogical = 64 << 20;

uint64_t Allocated(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// A kLogical-byte file holding two short runs of data, the rest holes.
// Returns its content; false when the file system made no holes.
bool MakeSparse(const std::string& path, std::string* content) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  BOOST_REQUIRE(fd.valid());
  content->assign(static_cast<size_t>(kLogical), '\0');
  const std::string a = "data at the start\n", b = "data in the middle\n";
  BOOST_REQUIRE(PwriteAll(fd.get(), a.data(), a.size(), 0, "test").ok());
  BOOST_REQUIRE(PwriteAll(fd.get(), b.data(), b.size(), 40 << 20, "test").ok());
  BOOST_REQUIRE(::ftruncate(fd.get(), kLogical) == 0);
  content->replace(0, a.size(), a);
  content->replace(40 << 20, b.size(), b);
  fd.reset();
  return Allocated(path) < (1 << 20);
}

std::string ReadAll(const std::string& path) {
  std::string out;
  BOOST_REQUIRE(ReadFileToString(path, &out).ok());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ASparseFileIsStoredAndRestoredWithItsHoles) {
  testing::TempDir tmp{"guard-sparse-test"};
  std::string content;
  if (!MakeSparse(tmp.File("sparse"), &content)) {
    BOOST_TEST_MESSAGE("skipped: " << tmp.path << " makes no holes");
    return;
  }
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  store->SetCompress(false);  // as a session stores: raw (store_compact.h)
  UniqueFd in;
  BOOST_REQUIRE(OpenFile(tmp.File("sparse"), O_RDONLY, 0, &in).ok());
  BlobKey key;
  uint64_t size = 0;
  BOOST_REQUIRE(store->PutFd(in.get(), &key, &size).ok());
  BOOST_TEST(size == static_cast<uint64_t>(kLogical));
  BOOST_TEST(key == BlobKey::OfBytes(content));  // the key of the logical content
  BOOST_TEST(Allocated(store->ObjectPath(key)) < (1u << 20));

  UniqueFd out;
  BOOST_REQUIRE(OpenFile(tmp.File("restored"), O_WRONLY | O_CREAT | O_EXCL, 0600, &out).ok());
  BlobRef ref;
  ref.kind = BlobRef::Kind::kKey;
  ref.key = key;
  BOOST_REQUIRE(store->ReadToNewFile(ref, out.get(), &size).ok());
  out.reset();
  BOOST_TEST(Allocated(tmp.File("restored")) < (1u << 20));
  BOOST_TEST((ReadAll(tmp.File("restored")) == content));
}

BOOST_AUTO_TEST_CASE(ASparseFileStoredCompressedReadsBackWhole) {
  testing::TempDir tmp{"guard-sparse-test"};
  std::string content;
  MakeSparse(tmp.File("sparse"), &content);  // with or without holes
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  UniqueFd in;
  BOOST_REQUIRE(OpenFile(tmp.File("sparse"), O_RDONLY, 0, &in).ok());
  BlobKey key;
  uint64_t size = 0;
  BOOST_REQUIRE(store->PutFd(in.get(), &key, &size).ok());
  BOOST_TEST(key == BlobKey::OfBytes(content));
  BlobRef ref;
  ref.kind = BlobRef::Kind::kKey;
  ref.key = key;
  std::string back;
  BOOST_REQUIRE(store->ReadToString(ref, &back).ok());
  BOOST_TEST((back == content));
}

// Pieces of every size, zero runs of every length and alignment: what the
// writer leaves is the content, whatever it skipped.
BOOST_AUTO_TEST_CASE(TheSparseWriterKeepsEveryByte) {
  testing::TempDir tmp{"guard-sparse-test"};
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    std::string content;
    const size_t n = rng() % (300 * 1024);
    while (content.size() < n) {
      size_t run = 1 + rng() % 20000;
      if (rng() % 2) content.append(run, '\0');
      else for (size_t i = 0; i < run; ++i) content.push_back(static_cast<char>(1 + rng() % 255));
    }
    if (round % 3 == 0) content.append(1 + rng() % 9000, '\0');  // ends in zeros
    const std::string path = tmp.File("w" + std::to_string(round));
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    BOOST_REQUIRE(fd.valid());
    SparseWriter w(fd.get());
    for (size_t pos = 0; pos < content.size();) {
      size_t k = std::min<size_t>(content.size() - pos, 1 + rng() % 70000);
      BOOST_REQUIRE(w.Write(content.data() + pos, k).ok());
      pos += k;
    }
    BOOST_REQUIRE(w.Finish().ok());
    fd.reset();
    BOOST_TEST((ReadAll(path) == content), "round " << round);

    // And read back through the sparse reader, by odd pieces.
    UniqueFd rfd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    SparseReader r(rfd.get());
    std::string back;
    char buf[5000];
    for (off_t off = 0;;) {
      size_t got = 0;
      BOOST_REQUIRE(r.ReadFull(buf, sizeof buf, off, &got).ok());
      back.append(buf, got);
      off += static_cast<off_t>(got);
      if (got < sizeof buf) break;
    }
    BOOST_TEST((back == content), "round " << round);
  }
}

// A file without holes is read up to the size its first look found, with
// no read past it to find its end: bytes appended after that look are left
// out, as if it had been read an instant earlier; a file that shrank gives
// what is left.
BOOST_AUTO_TEST_CASE(AFileWithoutHolesIsReadUpToItsSizeAtTheFirstLook) {
  testing::TempDir tmp{"guard-sparse-test"};
  const std::string path = tmp.File("grows");
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  BOOST_REQUIRE(fd.valid());
  const std::string a(10000, 'a');
  BOOST_REQUIRE(PwriteAll(fd.get(), a.data(), a.size(), 0, "test").ok());
  SparseReader r(fd.get());
  char buf[4096];
  size_t got = 0;
  BOOST_REQUIRE(r.ReadFull(buf, sizeof buf, 0, &got).ok());
  BOOST_TEST(got == sizeof buf);
  BOOST_REQUIRE(::pwrite(fd.get(), "bbbb", 4, 10000) == 4);  // grows after the look
  BOOST_REQUIRE(r.ReadFull(buf, sizeof buf, 8192, &got).ok());
  BOOST_TEST(got == 10000u - 8192u);
  BOOST_REQUIRE(r.ReadFull(buf, sizeof buf, 10000, &got).ok());
  BOOST_TEST(got == 0u);
  BOOST_REQUIRE(::ftruncate(fd.get(), 5000) == 0);  // shrinks
  BOOST_REQUIRE(r.ReadFull(buf, sizeof buf, 4096, &got).ok());
  BOOST_TEST(got == 5000u - 4096u);
}

BOOST_AUTO_TEST_CASE(AllZeroIsExact) {
  std::string s(1000, '\0');
  BOOST_TEST(IsAllZero(s.data(), s.size()));
  BOOST_TEST(IsAllZero(s.data(), 0));
  for (size_t i : {0u, 1u, 7u, 31u, 32u, 500u, 999u}) {
    s[i] = 1;
    BOOST_TEST(!IsAllZero(s.data(), s.size()), i);
    BOOST_TEST(IsAllZero(s.data() + i + 1, s.size() - i - 1), i);
    s[i] = 0;
  }
}
