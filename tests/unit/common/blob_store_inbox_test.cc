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
#include <set>
#include <string>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "common/inbox_layout.h"
#include "tests/unit/support/temp_dir.h"

namespace fs = std::filesystem;
using guard::BlobRef;
using guard::BlobStore;
using guard::Status;
using guard::UniqueFd;

namespace {

struct Fixture {
  Fixture() {
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
    fs::create_directory(dir + "/inbox");
    for (unsigned shard = 0; shard < GUARD_INBOX_SHARDS; ++shard) {
      fs::create_directory(dir + "/inbox/" + guard_inbox_shard_char(shard));
    }
    fs::create_directory(dir + "/tree");
    inbox.reset(::open((dir + "/inbox").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    BOOST_REQUIRE(inbox.valid());
  }
  void Write(const std::string& rel, const std::string& data) const {
    std::ofstream(dir + "/" + rel, std::ios::binary) << data;
  }
  // Where the shim puts pre-image `name`: in its shard of the inbox.
  std::string In(const std::string& name) const { return dir + "/inbox/" + BlobStore::InboxPath(name); }
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
  guard::testing::TempDir tmp{"guard-inbox-test"};
  const std::string& dir = tmp.path;
  std::unique_ptr<BlobStore> store;
  UniqueFd inbox;
};

BOOST_FIXTURE_TEST_CASE(ALinkOfTheVictimIsTakenAndGivenAgainIsFoundTaken, Fixture) {
  Write("tree/victim", "before\n");
  BOOST_REQUIRE(::link((dir + "/tree/victim").c_str(), In("s-1").c_str()) == 0);
  BlobStore::InboxVictim v = VictimOf("tree/victim");
  BOOST_REQUIRE(::unlink((dir + "/tree/victim").c_str()) == 0);  // the host's delete
  Status s = store->TakeFromInbox(inbox.get(), "s-1", v);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(!fs::exists(In("s-1")));
  BOOST_TEST(Pending("s-1") == "before\n");
  // The same record again: nothing left in the inbox, the pre-image is taken.
  s = store->TakeFromInbox(inbox.get(), "s-1", v);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(Pending("s-1") == "before\n");
}

BOOST_FIXTURE_TEST_CASE(ACopyOfOursWithOneNameIsTaken, Fixture) {
  Write("tree/victim", "new\n");
  Write("inbox/" + BlobStore::InboxPath("s-2"), "old\n");
  Status s = store->TakeFromInbox(inbox.get(), "s-2", VictimOf("tree/victim"));
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST(Pending("s-2") == "old\n");
}

BOOST_FIXTURE_TEST_CASE(WhatIsNotThePreImageIsRefusedAndLeftWhereItIs, Fixture) {
  Write("tree/victim", "victim\n");
  Write("tree/other", "another file\n");
  // A symlink, a directory, a second name of a file that is not the victim,
  // a name that is nowhere: none is taken.
  BOOST_REQUIRE(::symlink("/etc/passwd", In("s-link").c_str()) == 0);
  fs::create_directory(In("s-dir"));
  BOOST_REQUIRE(::link((dir + "/tree/other").c_str(), In("s-other").c_str()) == 0);
  BlobStore::InboxVictim v = VictimOf("tree/victim");
  for (const char* name : {"s-link", "s-dir", "s-other", "s-missing"}) {
    Status s = store->TakeFromInbox(inbox.get(), name, v);
    BOOST_TEST(!s.ok(), name);
    BOOST_TEST(!fs::exists(dir + "/store/pending/" + name), name);
  }
  BOOST_TEST(fs::is_symlink(In("s-link")));
  BOOST_TEST(fs::exists(In("s-other")));
}

BOOST_AUTO_TEST_CASE(ConsecutiveNamesGoToDifferentShards) {
  // The shim's names end in a call counter: eight in a row use all eight
  // shards, by the counter modulo 8, from its last three digits.
  std::set<unsigned> seen;
  for (int i = 0; i < 8; ++i) seen.insert(guard_inbox_shard(("s-1.2.ab." + std::to_string(1000 + i)).c_str(), 13));
  BOOST_TEST(seen.size() == 8u);
  BOOST_TEST(BlobStore::InboxPath("s-1.2.ab.1007") == "7/s-1.2.ab.1007");
  BOOST_TEST(BlobStore::InboxPath("s-1.2.ab.123456789") == std::string(1, guard_inbox_shard_char(789 % 8)) + "/s-1.2.ab.123456789");
  BOOST_TEST(BlobStore::InboxPath("no-digits") == "0/no-digits");
}

BOOST_FIXTURE_TEST_CASE(APreImageInAnotherShardIsNotTaken, Fixture) {
  Write("tree/victim", "before\n");
  // s-3 belongs in shard 3; a link of the victim put in shard 4 is not it.
  BOOST_REQUIRE(::link((dir + "/tree/victim").c_str(), (dir + "/inbox/4/s-3").c_str()) == 0);
  Status s = store->TakeFromInbox(inbox.get(), "s-3", VictimOf("tree/victim"));
  BOOST_TEST(!s.ok());
  BOOST_TEST(fs::exists(dir + "/inbox/4/s-3"));
  BOOST_TEST(!fs::exists(dir + "/store/pending/s-3"));
}

}  // namespace
