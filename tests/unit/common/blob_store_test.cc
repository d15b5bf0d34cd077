#define BOOST_TEST_MODULE blob_store
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "tests/unit/support/temp_dir.h"

// Printers for BOOST_TEST, found by argument-dependent lookup.
namespace guard {
std::ostream& operator<<(std::ostream& os, const BlobKey& k) { return os << k.Hex(); }
std::ostream& operator<<(std::ostream& os, Status::Code c) { return os << static_cast<int>(c); }
}  // namespace guard

namespace fs = std::filesystem;
using guard::BlobKey;
using guard::BlobRef;
using guard::BlobStore;
using guard::Status;
using guard::UniqueFd;

namespace {

using guard::testing::TempDir;

// A temp dir holding an open store at <dir>/store.
struct StoreFixture {
  StoreFixture() {
    Status s = BlobStore::Open(tmp.path + "/store", &store);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  }
  std::string StorePath(const std::string& rel) const { return tmp.path + "/store/" + rel; }
  TempDir tmp;
  std::unique_ptr<BlobStore> store;
};

BlobRef KeyRef(const BlobKey& key) {
  BlobRef r;
  r.kind = BlobRef::Kind::kKey;
  r.key = key;
  return r;
}

BlobRef PendingRef(const std::string& name) {
  BlobRef r;
  r.kind = BlobRef::Kind::kPending;
  r.pending = name;
  return r;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

std::string Compressible(size_t n) {
  std::string s;
  while (s.size() < n)
    s += "the quick brown fox jumps over the lazy dog " + std::to_string(s.size() % 97) + "\n";
  s.resize(n);
  return s;
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  BOOST_REQUIRE(f.good());
}

std::string ReadFile(const std::string& path) {
  std::string out;
  BOOST_REQUIRE(guard::ReadFileToString(path, &out).ok());
  return out;
}

size_t CountFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) ++n;
  }
  return n;
}

std::string RoundTrip(BlobStore* store, const BlobKey& key) {
  std::string out;
  Status s = store->ReadToString(KeyRef(key), &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return out;
}

BlobKey PutFile(BlobStore* store, const std::string& path, uint64_t* size = nullptr) {
  UniqueFd fd;
  BOOST_REQUIRE(guard::OpenFile(path, O_RDONLY, 0, &fd).ok());
  BlobKey key;
  Status s = store->PutFd(fd.get(), &key, size);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return key;
}

void FlipByte(const std::string& path, off_t offset) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  BOOST_REQUIRE(fd.valid());
  char c;
  BOOST_REQUIRE_EQUAL(::pread(fd.get(), &c, 1, offset), 1);
  c = static_cast<char>(c ^ 0x5a);
  BOOST_REQUIRE_EQUAL(::pwrite(fd.get(), &c, 1, offset), 1);
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

nlink_t LinksOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_nlink;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(EmptyBlobRoundTrips, StoreFixture) {
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes("", &key).ok());
  BOOST_TEST(key == BlobKey::OfBytes(""));
  BOOST_TEST(store->Contains(key));
  BOOST_TEST(!EndsWith(store->ObjectPath(key), ".zst"));  // a frame would be larger than nothing
  BOOST_TEST(RoundTrip(store.get(), key) == "");

  WriteFile(tmp.path + "/empty", "");
  uint64_t size = 99;
  BOOST_TEST(PutFile(store.get(), tmp.path + "/empty", &size) == key);
  BOOST_TEST(size == 0u);
}

BOOST_FIXTURE_TEST_CASE(OneByteBlobRoundTrips, StoreFixture) {
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes("x", &key).ok());
  BOOST_TEST(key == BlobKey::OfBytes("x"));
  BOOST_TEST(RoundTrip(store.get(), key) == "x");
  BOOST_TEST(ReadFile(store->ObjectPath(key)) == "x");
}

BOOST_FIXTURE_TEST_CASE(CompressibleContentIsStoredCompressed, StoreFixture) {
  // Several chunks, so that the streaming path past the first chunk is used.
  for (size_t n : {size_t{1000}, size_t{256 * 1024}, size_t{3 * 1024 * 1024 + 17}}) {
    std::string data = Compressible(n);
    WriteFile(tmp.path + "/text", data);
    uint64_t size = 0;
    BlobKey key = PutFile(store.get(), tmp.path + "/text", &size);
    BOOST_TEST(size == n);
    BOOST_TEST(key == BlobKey::OfBytes(data));
    std::string path = store->ObjectPath(key);
    BOOST_TEST(EndsWith(path, "/" + key.Hex() + ".zst"));
    BOOST_TEST(path.find("/objects/" + key.Hex().substr(0, 2) + "/") != std::string::npos);
    BOOST_TEST(fs::file_size(path) < n / 2);
    BOOST_TEST(RoundTrip(store.get(), key) == data);
  }
}

BOOST_FIXTURE_TEST_CASE(IncompressibleContentIsStoredRaw, StoreFixture) {
  std::string data = RandomBytes(600 * 1024 + 3, 1);
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes(data, &key).ok());
  BOOST_TEST(key == BlobKey::OfBytes(data));
  std::string path = store->ObjectPath(key);
  BOOST_TEST(EndsWith(path, "/" + key.Hex()));
  BOOST_TEST(ReadFile(path) == data);  // raw means byte for byte the content
  BOOST_TEST(RoundTrip(store.get(), key) == data);
}

BOOST_FIXTURE_TEST_CASE(IdenticalContentIsStoredOnce, StoreFixture) {
  std::string text = Compressible(500 * 1024);
  std::string noise = RandomBytes(300 * 1024, 2);
  WriteFile(tmp.path + "/text", text);
  BlobKey k1, k2, k3, k4;
  BOOST_REQUIRE(store->PutBytes(text, &k1).ok());
  BOOST_REQUIRE(store->PutBytes(text, &k2).ok());
  k3 = PutFile(store.get(), tmp.path + "/text");
  BOOST_REQUIRE(store->PutBytes(noise, &k4).ok());
  BOOST_REQUIRE(store->PutBytes(noise, &k4).ok());
  BOOST_TEST(k1 == k2);
  BOOST_TEST(k1 == k3);
  BOOST_TEST(CountFiles(StorePath("objects")) == 2u);
  BOOST_TEST(CountFiles(StorePath("tmp")) == 0u);
  BOOST_TEST(store->SyncWritten().ok());
  // A put of content already stored makes no temp file, and refreshes the
  // object's mtime, so that a garbage collection running meanwhile keeps it.
  for (const auto& e : fs::recursive_directory_iterator(StorePath("objects"))) {
    if (!e.is_regular_file()) continue;
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    BOOST_REQUIRE(::utimensat(AT_FDCWD, e.path().c_str(), old, 0) == 0);
  }
  BOOST_REQUIRE(store->PutBytes(text, &k2).ok());
  BOOST_TEST(k1 == k2);
  size_t refreshed = 0;
  for (const auto& e : fs::recursive_directory_iterator(StorePath("objects"))) {
    struct stat st;
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0 && st.st_mtime > 1000000000) ++refreshed;
  }
  BOOST_TEST(refreshed == 1u);
  BOOST_TEST(CountFiles(StorePath("objects")) == 2u);
  // ... nor needs a temp file at all: with tmp/ unusable, new content fails
  // to be put and content already stored is put all the same.
  fs::remove_all(StorePath("tmp"));
  WriteFile(StorePath("tmp"), "not a directory");
  BlobKey k5;
  BOOST_TEST(store->PutBytes(text, &k5).ok());
  BOOST_TEST(k5 == k1);
  BOOST_TEST(!store->PutBytes("content never stored", &k5).ok());
  fs::remove(StorePath("tmp"));
  fs::create_directory(StorePath("tmp"));
}

BOOST_FIXTURE_TEST_CASE(DamagedBlobIsDetectedOnRead, StoreFixture) {
  std::string raw_data = RandomBytes(100 * 1024, 3);
  std::string zst_data = Compressible(700 * 1024);
  BlobKey raw, zst;
  BOOST_REQUIRE(store->PutBytes(raw_data, &raw).ok());
  BOOST_REQUIRE(store->PutBytes(zst_data, &zst).ok());
  BOOST_REQUIRE(EndsWith(store->ObjectPath(zst), ".zst"));

  FlipByte(store->ObjectPath(raw), 5000);
  std::string out;
  Status s = store->ReadToString(KeyRef(raw), &out);
  BOOST_TEST(s.IsCorruption());
  BOOST_TEST(s.message() == "blob " + raw.Hex() + " is damaged: content does not match its key");

  // A flipped byte inside the frame either breaks decoding or changes the content.
  std::string zst_path = store->ObjectPath(zst);
  FlipByte(zst_path, static_cast<off_t>(fs::file_size(zst_path) / 2));
  s = store->ReadToString(KeyRef(zst), &out);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  BOOST_TEST(s.message().find("blob " + zst.Hex() + " is damaged") == 0u, s.ToString());

  // A truncated frame and garbage in place of a frame.
  BlobKey other;
  std::string other_data = Compressible(900 * 1024) + "tail";
  BOOST_REQUIRE(store->PutBytes(other_data, &other).ok());
  std::string other_path = store->ObjectPath(other);
  BOOST_REQUIRE(EndsWith(other_path, ".zst"));
  fs::resize_file(other_path, fs::file_size(other_path) - 7);
  s = store->ReadToString(KeyRef(other), &out);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  WriteFile(other_path, "definitely not zstd");
  s = store->ReadToString(KeyRef(other), &out);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  WriteFile(other_path, "");
  s = store->ReadToString(KeyRef(other), &out);
  BOOST_TEST(s.IsCorruption(), s.ToString());
}

BOOST_FIXTURE_TEST_CASE(MissingBlobIsNotFound, StoreFixture) {
  BlobKey key = BlobKey::OfBytes("never stored");
  BOOST_TEST(!store->Contains(key));
  BOOST_TEST(store->ObjectPath(key) == "");
  std::string out;
  Status s = store->ReadToString(KeyRef(key), &out);
  BOOST_TEST(s.IsNotFound());
  BOOST_TEST(s.message() == "blob " + key.Hex() + " is missing");
  BOOST_TEST(store->ReadToString(PendingRef("1-2-3"), &out).IsNotFound());
  BOOST_TEST(store->ReadToString(BlobRef(), &out).code() == Status::Code::kInvalidArgument);
  BOOST_TEST(store->ReadToString(PendingRef("../VERSION"), &out).code() ==
             Status::Code::kInvalidArgument);
}

BOOST_FIXTURE_TEST_CASE(AdoptByLinkDoesNotReadAndResolvesToContentKey, StoreFixture) {
  std::string content = Compressible(400 * 1024);
  std::string victim = tmp.path + "/victim";
  WriteFile(victim, content);
  BOOST_REQUIRE(::chmod(victim.c_str(), 04755) == 0);
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  BOOST_REQUIRE(dir.valid());
  BOOST_REQUIRE(LinksOf(victim) == 1u);

  std::string pending;
  Status s = store->AdoptByLink(dir.get(), "victim", &pending);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(LinksOf(victim) == 2u);  // the same inode: nothing was copied
  std::vector<std::string> names;
  BOOST_REQUIRE(store->ListPending(&names).ok());
  BOOST_TEST(names == std::vector<std::string>{pending});
  BOOST_TEST(ModeOf(StorePath("pending/" + pending)) == 04755u);  // still the user's inode
  std::string out;
  BOOST_REQUIRE(store->ReadToString(PendingRef(pending), &out).ok());
  BOOST_TEST(out == content);

  // The operation goes ahead: the user's name disappears.
  BOOST_REQUIRE(::unlink(victim.c_str()) == 0);
  BlobKey key;
  s = store->ResolvePending(pending, &key);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(key == BlobKey::OfBytes(content));
  BOOST_TEST(store->ObjectPath(key) ==
             StorePath("objects/" + key.Hex().substr(0, 2) + "/" + key.Hex()));
  BOOST_TEST(ModeOf(store->ObjectPath(key)) == 0600u);  // no longer the user's file
  BOOST_REQUIRE(store->ListPending(&names).ok());
  BOOST_TEST(names.empty());
  BOOST_TEST(RoundTrip(store.get(), key) == content);
  BOOST_TEST(store->SyncWritten().ok());
  BOOST_TEST(CountFiles(StorePath("pending")) == 0u);
}

BOOST_FIXTURE_TEST_CASE(ResolvedPendingNameStaysReadableAndResolvesAgain, StoreFixture) {
  // A journal may name the pending blob without the kBlobResolved record that
  // maps it (not yet written, or lost in a crash): the name must still lead
  // to the content, and resolving it again must give the same key.
  std::string content = RandomBytes(70 * 1024, 5);
  WriteFile(tmp.path + "/doomed", content);
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  BOOST_REQUIRE(store->AdoptByLink(dir.get(), "doomed", &pending).ok());
  BOOST_REQUIRE(::unlink((tmp.path + "/doomed").c_str()) == 0);
  BlobKey key;
  BOOST_REQUIRE(store->ResolvePending(pending, &key).ok());
  // Until the next SyncWritten the pending name stays, as a second link to
  // the object; it no longer counts as pending.
  BOOST_TEST(fs::exists(StorePath("pending/" + pending)));
  BOOST_TEST(LinksOf(store->ObjectPath(key)) == 2u);
  std::vector<std::string> names;
  BOOST_REQUIRE(store->ListPending(&names).ok());
  BOOST_TEST(names.empty());
  BlobKey again;
  BOOST_REQUIRE(store->ResolvePending(pending, &again).ok());  // as after a crash here
  BOOST_TEST(again == key);
  BOOST_TEST(CountFiles(StorePath("objects")) == 1u);

  BOOST_REQUIRE(store->SyncWritten().ok());
  BOOST_TEST(!fs::exists(StorePath("pending/" + pending)));
  BOOST_TEST(LinksOf(store->ObjectPath(key)) == 1u);
  std::string out;
  Status s = store->ReadToString(PendingRef(pending), &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(out == content);
  BOOST_REQUIRE(store->ResolvePending(pending, &again).ok());
  BOOST_TEST(again == key);
}

BOOST_FIXTURE_TEST_CASE(AMarkerLeftWithAnotherKeyIsReplaced, StoreFixture) {
  // A marker is made in place (a symlink is whole when it appears); one
  // already there, from a resolution a crash cut short, is replaced by a
  // rename over it, never trusted or kept.
  std::string content = RandomBytes(5000, 11);
  WriteFile(tmp.path + "/gone", content);
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  BOOST_REQUIRE(store->AdoptByLink(dir.get(), "gone", &pending).ok());
  BOOST_REQUIRE(::unlink((tmp.path + "/gone").c_str()) == 0);
  const std::string marker = StorePath("resolved/" + pending);
  BOOST_REQUIRE(::symlink("0123456789abcdef0123456789abcdef", marker.c_str()) == 0);
  BlobKey key;
  Status s = store->ResolvePending(pending, &key);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(key == BlobKey::OfBytes(content));
  char text[64] = {};
  BOOST_REQUIRE(::readlink(marker.c_str(), text, sizeof text - 1) == 32);
  BOOST_TEST(std::string(text) == key.Hex());
  BOOST_TEST(CountFiles(StorePath("tmp")) == 0u);
  BOOST_TEST(RoundTrip(store.get(), key) == content);
}

BOOST_FIXTURE_TEST_CASE(AnObjectDirectoryRemovedFromOutsideIsMadeAgain, StoreFixture) {
  // The store makes each objects/XX once and remembers it; one removed
  // behind its back (by hand) is made again by the next put into it.
  std::string content = RandomBytes(3000, 12);
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes(content, &key).ok());
  const std::string object = store->ObjectPath(key);
  const std::string subdir = StorePath("objects/" + key.Hex().substr(0, 2));
  BOOST_REQUIRE(::unlink(object.c_str()) == 0);
  BOOST_REQUIRE(::rmdir(subdir.c_str()) == 0);
  BlobKey again;
  Status s = store->PutBytes(content, &again);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(again == key);
  BOOST_TEST(ModeOf(subdir) == 0700u);
  BOOST_TEST(RoundTrip(store.get(), key) == content);
}

BOOST_FIXTURE_TEST_CASE(AResolutionIntoAnObjectDirectoryRemovedFromOutsideLinksThePendingInode, StoreFixture) {
  // The same as above for a resolution (a link of the pending inode, not a
  // rename of a temp file): objects/XX, known to this store from an earlier
  // put, is gone; the link's ENOENT makes it again, and the pending name's
  // inode becomes the object, with a marker of the right key.
  std::string content = RandomBytes(4000, 13);
  BlobKey key;
  BOOST_REQUIRE(store->PutBytes(content, &key).ok());
  const std::string subdir = StorePath("objects/" + key.Hex().substr(0, 2));
  BOOST_REQUIRE(::unlink(store->ObjectPath(key).c_str()) == 0);
  BOOST_REQUIRE(::rmdir(subdir.c_str()) == 0);
  WriteFile(tmp.path + "/gone", content);
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  BOOST_REQUIRE(store->AdoptByLink(dir.get(), "gone", &pending).ok());
  BOOST_REQUIRE(::unlink((tmp.path + "/gone").c_str()) == 0);
  BlobKey resolved;
  Status s = store->ResolvePending(pending, &resolved);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(resolved == key);
  char text[64] = {};
  BOOST_REQUIRE(::readlink(StorePath("resolved/" + pending).c_str(), text, sizeof text - 1) == 32);
  BOOST_TEST(std::string(text) == key.Hex());
  BOOST_REQUIRE(store->SyncWritten().ok());
  BOOST_TEST(RoundTrip(store.get(), key) == content);
}

BOOST_FIXTURE_TEST_CASE(AdoptedFileStillLinkedElsewhereIsCopiedOnResolve, StoreFixture) {
  // The operation failed, so the user's file still shares the pending inode:
  // the stored blob must not change when the user later edits that file.
  std::string victim = tmp.path + "/kept";
  WriteFile(victim, "original content");
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  BOOST_REQUIRE(store->AdoptByLink(dir.get(), "kept", &pending).ok());
  BlobKey key;
  BOOST_REQUIRE(store->ResolvePending(pending, &key).ok());
  BOOST_REQUIRE(store->SyncWritten().ok());  // drops the pending name
  BOOST_TEST(LinksOf(victim) == 1u);
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.write("EDITED", 6);
  }
  BOOST_TEST(RoundTrip(store.get(), key) == "original content");
}

BOOST_FIXTURE_TEST_CASE(DetachedPendingBlobKeepsItsContentWhenTheOldInodeIsWritten, StoreFixture) {
  // A file deleted while a process still has it open: the process may reopen
  // it for writing (/proc/self/fd/N). Detached first, the store holds a copy
  // and the write reaches only the old inode.
  std::string victim = tmp.path + "/open";
  WriteFile(victim, "the pre-image");
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  BOOST_REQUIRE(store->AdoptByLink(dir.get(), "open", &pending).ok());
  UniqueFd held(::open(victim.c_str(), O_RDWR | O_CLOEXEC));
  BOOST_REQUIRE(held.valid());
  BOOST_REQUIRE(::unlink(victim.c_str()) == 0);
  BOOST_TEST(LinksOf(StorePath("pending/" + pending)) == 1u);  // the inode the fd writes

  Status s = store->DetachPending(pending);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_REQUIRE(::ftruncate(held.get(), 0) == 0);
  BOOST_REQUIRE(::pwrite(held.get(), "REWRITTEN", 9, 0) == 9);
  BlobKey key;
  BOOST_REQUIRE(store->ResolvePending(pending, &key).ok());
  BOOST_TEST(key == BlobKey::OfBytes("the pre-image"));
  BOOST_TEST(RoundTrip(store.get(), key) == "the pre-image");
  BOOST_TEST(store->DetachPending("../VERSION").code() == Status::Code::kInvalidArgument);
}

BOOST_FIXTURE_TEST_CASE(AdoptByLinkDoesNotFollowSymlinks, StoreFixture) {
  WriteFile(tmp.path + "/target", "target");
  BOOST_REQUIRE(::symlink("target", (tmp.path + "/link").c_str()) == 0);
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  Status s = store->AdoptByLink(dir.get(), "link", &pending);
  BOOST_TEST(s.code() == Status::Code::kInvalidArgument, s.ToString());
  BOOST_TEST(LinksOf(tmp.path + "/target") == 1u);
  std::vector<std::string> names;
  BOOST_REQUIRE(store->ListPending(&names).ok());
  BOOST_TEST(names.empty());

  s = store->AdoptByLink(dir.get(), "no-such-file", &pending);
  BOOST_TEST(s.err() == ENOENT);
}

BOOST_FIXTURE_TEST_CASE(AdoptByLinkAcrossFilesystemsFailsWithExdev, StoreFixture) {
  struct stat shm, here;
  if (::stat("/dev/shm", &shm) != 0 || ::stat(tmp.path.c_str(), &here) != 0 ||
      shm.st_dev == here.st_dev) {
    BOOST_TEST_MESSAGE("skipped: /dev/shm is missing or on the same filesystem as " << tmp.path);
    return;
  }
  char name[] = "/dev/shm/guard-exdev-XXXXXX";
  UniqueFd f(::mkstemp(name));
  BOOST_REQUIRE(f.valid());
  UniqueFd dir(::open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string pending;
  Status s = store->AdoptByLink(dir.get(), fs::path(name).filename().string(), &pending);
  ::unlink(name);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.err() == EXDEV, s.ToString());
}

BOOST_FIXTURE_TEST_CASE(InjectedFailureFailsPutsWithoutPartialObjects, StoreFixture) {
  WriteFile(tmp.path + "/file", Compressible(300 * 1024));
  UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd file(::open((tmp.path + "/file").c_str(), O_RDONLY | O_CLOEXEC));
  store->InjectFailure(ENOSPC);
  BlobKey key;
  Status s = store->PutBytes("some content", &key);
  BOOST_TEST(s.IsNoSpace());
  BOOST_TEST(s.err() == ENOSPC);
  s = store->PutFd(file.get(), &key, nullptr);
  BOOST_TEST(s.IsNoSpace());
  std::string pending;
  s = store->AdoptByLink(dir.get(), "file", &pending);
  BOOST_TEST(s.err() == ENOSPC);
  BOOST_TEST(CountFiles(StorePath("objects")) == 0u);
  BOOST_TEST(CountFiles(StorePath("tmp")) == 0u);
  BOOST_TEST(CountFiles(StorePath("pending")) == 0u);
  BOOST_TEST(LinksOf(tmp.path + "/file") == 1u);

  store->InjectFailure(0);
  BOOST_TEST(store->PutBytes("some content", &key).ok());
  BOOST_TEST(CountFiles(StorePath("objects")) == 1u);
}

// A real full disk: a 1 MiB tmpfs in a private mount namespace. Needs
// CAP_SYS_ADMIN; skipped without it.
BOOST_AUTO_TEST_CASE(NoSpaceIsReportedAndLeavesNoPartialObject) {
  TempDir tmp;
  pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", tmp.path.c_str(), "tmpfs", 0, "size=1m,mode=0700") != 0) {
      ::_exit(77);
    }
    std::unique_ptr<BlobStore> store;
    if (!BlobStore::Open(tmp.path + "/store", &store).ok()) ::_exit(2);
    BlobKey key;
    Status s = store->PutBytes(RandomBytes(4 * 1024 * 1024, 4), &key);
    if (!s.IsNoSpace()) ::_exit(3);
    if (CountFiles(tmp.path + "/store/objects") != 0 || CountFiles(tmp.path + "/store/tmp") != 0)
      ::_exit(4);
    // Space freed by the failed put is usable again.
    if (!store->PutBytes("small", &key).ok()) ::_exit(5);
    ::_exit(0);
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    BOOST_TEST_MESSAGE("skipped: cannot mount a tmpfs here (needs CAP_SYS_ADMIN)");
    return;
  }
  BOOST_TEST(WEXITSTATUS(status) == 0, "child failed at step " << WEXITSTATUS(status));
}

BOOST_AUTO_TEST_CASE(StoreDirectoriesAreOwnerOnly) {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  // An existing store directory made by hand with a loose mode is tightened,
  // and the umask does not loosen what the store creates.
  BOOST_REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  BOOST_REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  mode_t old_umask = ::umask(0);
  std::unique_ptr<BlobStore> store;
  Status s = BlobStore::Open(dir, &store);
  BlobKey key;
  if (s.ok()) s = store->PutBytes("secret", &key);
  ::umask(old_umask);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  for (const char* sub : {"", "/objects", "/pending", "/resolved", "/tmp"}) {
    BOOST_TEST(ModeOf(dir + sub) == 0700u, dir + sub);
  }
  BOOST_TEST(ModeOf(dir + "/objects/" + key.Hex().substr(0, 2)) == 0700u);
  BOOST_TEST(ModeOf(store->ObjectPath(key)) == 0600u);
  BOOST_TEST(ModeOf(dir + "/VERSION") == 0600u);
}

BOOST_AUTO_TEST_CASE(SyncWrittenIsOneSyncfsWhereSyncfsReportsErrors) {
  // Linux 5.8 and later report writeback errors from syncfs(2): the store
  // then needs no fd per blob (BlobStore::SyncMode).
  TempDir tmp;
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  int major = 0, minor = 0;
  struct utsname u;
  BOOST_REQUIRE(::uname(&u) == 0);
  BOOST_REQUIRE(std::sscanf(u.release, "%d.%d", &major, &minor) == 2);
  bool new_kernel = major > 5 || (major == 5 && minor >= 8);
  BOOST_TEST((store->sync_mode() == BlobStore::SyncMode::kSyncfs) == new_kernel);
}

// Each durability test runs in both modes: the fsync-per-file fallback is
// what kernels before 5.8 use.
const BlobStore::SyncMode kSyncModes[] = {BlobStore::SyncMode::kSyncfs,
                                          BlobStore::SyncMode::kFsyncEach};

BOOST_FIXTURE_TEST_CASE(SyncWrittenSucceeds, StoreFixture) {
  for (BlobStore::SyncMode mode : kSyncModes) {
    store->SetSyncModeForTest(mode);
    BOOST_TEST(store->SyncWritten().ok());  // nothing written yet
    BlobKey key;
    BOOST_REQUIRE(store->PutBytes("durable", &key).ok());
    BOOST_REQUIRE(store->PutBytes("durable", &key).ok());  // deduplicated, synced too
    std::string name = mode == BlobStore::SyncMode::kSyncfs ? "f" : "g";
    WriteFile(tmp.path + "/" + name, "adopted " + name);
    UniqueFd dir(::open(tmp.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    std::string pending;
    BOOST_REQUIRE(store->AdoptByLink(dir.get(), name, &pending).ok());
    BOOST_TEST(store->SyncWritten().ok());
    BOOST_REQUIRE(::unlink((tmp.path + "/" + name).c_str()) == 0);
    BlobKey resolved;
    BOOST_REQUIRE(store->ResolvePending(pending, &resolved).ok());
    BOOST_TEST(fs::exists(StorePath("pending/" + pending)));
    BOOST_TEST(store->SyncWritten().ok());  // drops the pending name
    BOOST_TEST(!fs::exists(StorePath("pending/" + pending)));
    BOOST_TEST(store->SyncWritten().ok());
  }
}

BOOST_FIXTURE_TEST_CASE(SyncWrittenRunsConcurrentlyWithPuts, StoreFixture) {
  // The group commit syncs while the main thread stores; in kFsyncEach mode,
  // more puts than the unsynced-file cap make the putting thread sync inline
  // as well.
  for (BlobStore::SyncMode mode : kSyncModes) {
    store->SetSyncModeForTest(mode);
    std::string tag = mode == BlobStore::SyncMode::kSyncfs ? "syncfs " : "fsync ";
    std::atomic<bool> done{false};
    std::atomic<int> failures{0};
    std::thread committer([&] {
      while (!done.load()) {
        if (!store->SyncWritten().ok()) failures.fetch_add(1);
      }
    });
    std::vector<BlobKey> keys;
    for (int i = 0; i < 700; ++i) {
      BlobKey key;
      BOOST_REQUIRE(store->PutBytes(tag + "blob number " + std::to_string(i), &key).ok());
      keys.push_back(key);
    }
    done.store(true);
    committer.join();
    BOOST_TEST(failures.load() == 0);
    BOOST_TEST(store->SyncWritten().ok());
    for (int i = 0; i < 700; i += 97) {
      BOOST_TEST(RoundTrip(store.get(), keys[static_cast<size_t>(i)]) ==
                 tag + "blob number " + std::to_string(i));
    }
  }
}

BOOST_AUTO_TEST_CASE(StoreOfNewerVersionIsRefused) {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(dir, &store).ok());
  BOOST_TEST(ReadFile(dir + "/VERSION") == "1\n");
  store.reset();
  BOOST_REQUIRE(BlobStore::Open(dir, &store).ok());  // reopening its own version
  store.reset();
  WriteFile(dir + "/VERSION", "2\n");  // a store with append objects
  BOOST_REQUIRE(BlobStore::Open(dir, &store).ok());
  store.reset();
  WriteFile(dir + "/VERSION", "3\n");
  Status s = BlobStore::Open(dir, &store);
  BOOST_TEST(s.code() == Status::Code::kUnsupported, s.ToString());
  WriteFile(dir + "/VERSION", "banana");
  BOOST_TEST(BlobStore::Open(dir, &store).IsCorruption());
}

BOOST_AUTO_TEST_CASE(StaleTempFilesOfDeadWritersAreRemovedAtOpen) {
  TempDir tmp;
  std::string dir = tmp.path + "/store";
  std::unique_ptr<BlobStore> store;
  BOOST_REQUIRE(BlobStore::Open(dir, &store).ok());
  store.reset();
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  BOOST_REQUIRE(::waitpid(dead, nullptr, 0) == dead);
  std::string stale = dir + "/tmp/" + std::to_string(dead) + "-0-deadbeef";
  std::string recent = dir + "/tmp/" + std::to_string(dead) + "-1-deadbeef";
  std::string live = dir + "/tmp/" + std::to_string(::getpid()) + "-0-cafef00d";
  for (const std::string& p : {stale, recent, live}) WriteFile(p, "partial");
  struct timespec old_times[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  BOOST_REQUIRE(::utimensat(AT_FDCWD, stale.c_str(), old_times, 0) == 0);
  BOOST_REQUIRE(::utimensat(AT_FDCWD, live.c_str(), old_times, 0) == 0);
  BOOST_REQUIRE(BlobStore::Open(dir, &store).ok());
  BOOST_TEST(!fs::exists(stale));
  BOOST_TEST(fs::exists(recent));  // its writer might be in another pid namespace
  BOOST_TEST(fs::exists(live));
}

// ---- Large sparse file -----------------------------------------------------

namespace {

constexpr uint64_t kSparseSize = uint64_t{2} << 30;  // 2 GiB
struct Marker {
  uint64_t offset;
  const char* bytes;
};
// Not all zeros, and a marker on the very last bytes.
const Marker kMarkers[] = {
    {0, "head"},
    {(uint64_t{1} << 30) + 12345, "middle"},
    {(uint64_t{3} << 29) + (256 * 1024) - 3, "straddles a chunk"},
    {kSparseSize - 5, "tail!"},
};

// The sparse file's content at [offset, offset + n), from the markers alone.
void ExpectedContent(uint64_t offset, char* buf, size_t n) {
  std::memset(buf, 0, n);
  for (const Marker& m : kMarkers) {
    uint64_t len = std::strlen(m.bytes);
    for (uint64_t i = 0; i < len; ++i) {
      uint64_t at = m.offset + i;
      if (at >= offset && at < offset + n) buf[at - offset] = m.bytes[i];
    }
  }
}

BlobKey ExpectedSparseKey() {
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  std::vector<char> buf(1 << 20);
  for (uint64_t off = 0; off < kSparseSize; off += buf.size()) {
    ExpectedContent(off, buf.data(), buf.size());
    XXH3_128bits_update(st, buf.data(), buf.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return BlobKey{h.high64, h.low64};
}

// A field of /proc/self/status in KiB ("VmHWM", "VmRSS").
uint64_t StatusKiB(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return 0;
}

// Sets VmHWM back to the current RSS, so that the peak measured next belongs
// to what runs next and not to earlier test cases (Linux >= 4.0).
bool ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return f.good();
}

}  // namespace

BOOST_FIXTURE_TEST_CASE(LargeSparseFileStreamsInBoundedMemory, StoreFixture) {
  std::string path = tmp.path + "/sparse";
  {
    UniqueFd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    BOOST_REQUIRE(f.valid());
    BOOST_REQUIRE(::ftruncate(f.get(), static_cast<off_t>(kSparseSize)) == 0);
    for (const Marker& m : kMarkers) {
      BOOST_REQUIRE(guard::PwriteAll(f.get(), m.bytes, std::strlen(m.bytes),
                                     static_cast<off_t>(m.offset), "marker")
                        .ok());
    }
  }
  BlobKey expected = ExpectedSparseKey();  // independent of the store's reading

  bool reset = ResetPeakRss();
  uint64_t rss_before = reset ? StatusKiB("VmRSS") : StatusKiB("VmHWM");
  auto t0 = std::chrono::steady_clock::now();
  uint64_t size = 0;
  BlobKey key = PutFile(store.get(), path, &size);
  auto t1 = std::chrono::steady_clock::now();
  BOOST_TEST(size == kSparseSize);
  BOOST_TEST(key == expected);
  BOOST_TEST(fs::file_size(store->ObjectPath(key)) < (1u << 20));  // zeros compress

  // Read it back through a pipe; a thread checks every byte as it arrives.
  int p[2];
  BOOST_REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  UniqueFd rd(p[0]), wr(p[1]);
  ::fcntl(wr.get(), F_SETPIPE_SZ, 1 << 20);
  uint64_t received = 0;
  uint64_t mismatches = 0;
  std::thread drain([&] {
    std::vector<char> buf(1 << 20), want(1 << 20);
    for (;;) {
      ssize_t n = ::read(rd.get(), buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      ExpectedContent(received, want.data(), static_cast<size_t>(n));
      if (std::memcmp(buf.data(), want.data(), static_cast<size_t>(n)) != 0) ++mismatches;
      received += static_cast<uint64_t>(n);
    }
  });
  uint64_t read_size = 0;
  Status s = store->ReadTo(KeyRef(key), wr.get(), &read_size);
  wr.reset();
  drain.join();
  auto t2 = std::chrono::steady_clock::now();
  uint64_t rss_after = StatusKiB("VmHWM");

  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(read_size == kSparseSize);
  BOOST_TEST(received == kSparseSize);
  BOOST_TEST(mismatches == 0u);
  uint64_t growth_kib = rss_after - rss_before;
  using Sec = std::chrono::duration<double>;
  BOOST_TEST_MESSAGE("2 GiB sparse file: peak RSS growth "
                     << growth_kib << " KiB (" << (reset ? "VmRSS at reset " : "VmHWM ")
                     << rss_before << " -> VmHWM " << rss_after << " KiB); PutFd "
                     << Sec(t1 - t0).count() << " s, ReadTo " << Sec(t2 - t1).count() << " s");
  BOOST_TEST(growth_kib < 64u * 1024u);
}
