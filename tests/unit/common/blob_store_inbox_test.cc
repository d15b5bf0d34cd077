// BlobStore::TakeFromInbox: what the shim leaves in a session's inbox is
// taken into pending/ only when it is the pre-image its record names, and a
// record handed over again (the ring delivers at least once across a
// consumer's death: docs/ring.md) finds it taken.
#define BOOST_TEST_MODULE blob_store_inbox
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/blob_store.h"
#include "common/file_io.h"

namespace fs = std::filesystem;
using guard::BlobRef;
using guard::BlobStore;
using guard::Status;
using guard::UniqueFd;

namespace {

struct Fixture {
  Fixture() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/guard-inbox-test-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
    fs::create_directory(dir + "/inbox");
    fs::create_directory(dir + "/tree");
    inbox.reset(::open((dir + "/inbox").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    BOOST_REQUIRE(inbox.valid());
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void Write(const std::string& rel, const std::string& data) const {
    std::ofstream(dir + "/" + rel, std::ios::binary) << data;
  }
  BlobStore::InboxVictim VictimOf(const std::string& rel) const {
    struct stat st;
    BOOST_REQUIRE(::lstat((dir + "/" + rel).c_str(), &st) == 0);
    BlobStore::InboxVictim v;
    v.known = true;
    v.dev = st.st_dev;
    v.ino = st.st_ino;
    return v;
  }
  std::string Pending(const std::string& name) const {
    std::string out;
    BlobRef ref;
    ref.kind = BlobRef::Kind::kPending;
    ref.pending = name;
    Status s = store->ReadToString(ref, &out);
    return s.ok() ? out : "<" + s.ToString() + ">";
  }
  std::string dir;
  std::unique_ptr<BlobStore> store;
  UniqueFd inbox;
};

BOOST_FIXTURE_TEST_CASE(ALinkOfTheVictimIsTakenAndGivenAgainIsFoundTaken, Fixture) {
  Write("tree/victim", "before\n");
  BOOST_REQUIRE(::link((dir + "/tree/victim").c_str(), (dir + "/inbox/s-1").c_str()) == 0);
  BlobStore::InboxVictim v = VictimOf("tree/victim");
  BOOST_REQUIRE(::unlink((dir + "/tree/victim").c_str()) == 0);  // the host's delete
  Status s = store->TakeFromInbox(inbox.get(), "s-1", v);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(!fs::exists(dir + "/inbox/s-1"));
  BOOST_TEST(Pending("s-1") == "before\n");
  // The same record again: nothing left in the inbox, the pre-image is taken.
  s = store->TakeFromInbox(inbox.get(), "s-1", v);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(Pending("s-1") == "before\n");
}

BOOST_FIXTURE_TEST_CASE(ACopyOfOursWithOneNameIsTaken, Fixture) {
  Write("tree/victim", "new\n");
  Write("inbox/s-2", "old\n");
  Status s = store->TakeFromInbox(inbox.get(), "s-2", VictimOf("tree/victim"));
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(Pending("s-2") == "old\n");
}

BOOST_FIXTURE_TEST_CASE(WhatIsNotThePreImageIsRefusedAndLeftWhereItIs, Fixture) {
  Write("tree/victim", "victim\n");
  Write("tree/other", "another file\n");
  // A symlink, a directory, a second name of a file that is not the victim,
  // a name that is nowhere: none is taken.
  BOOST_REQUIRE(::symlink("/etc/passwd", (dir + "/inbox/s-link").c_str()) == 0);
  fs::create_directory(dir + "/inbox/s-dir");
  BOOST_REQUIRE(::link((dir + "/tree/other").c_str(), (dir + "/inbox/s-other").c_str()) == 0);
  BlobStore::InboxVictim v = VictimOf("tree/victim");
  for (const char* name : {"s-link", "s-dir", "s-other", "s-missing"}) {
    Status s = store->TakeFromInbox(inbox.get(), name, v);
    BOOST_TEST(!s.ok(), name);
    BOOST_TEST(!fs::exists(dir + "/store/pending/" + name), name);
  }
  BOOST_TEST(fs::is_symlink(dir + "/inbox/s-link"));
  BOOST_TEST(fs::exists(dir + "/inbox/s-other"));
}

}  // namespace
