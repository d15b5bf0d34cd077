// Pending blobs attributed to a session (docs/format.md, "Store layout" and
// "Pending blobs without a record"): the names a store adopts under an
// owner, telling them apart, and the two calls recovery decides with.
#define BOOST_TEST_MODULE blob_store_pending_owner
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "tests/unit/support/temp_dir.h"

namespace fs = std::filesystem;
using guard::BlobStore;
using guard::Status;
using guard::UniqueFd;

namespace {

struct StoreFixture {
  StoreFixture() {
    Status s = BlobStore::Open(dir + "/store", &store);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    fs::create_directory(dir + "/tree");
    BOOST_REQUIRE(guard::OpenFile(dir + "/tree", O_RDONLY | O_DIRECTORY, 0, &tree).ok());
  }
  void Write(const std::string& name, const std::string& content) {
    UniqueFd fd;
    BOOST_REQUIRE(guard::OpenFile(dir + "/tree/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0644, &fd).ok());
    BOOST_REQUIRE(guard::WriteAll(fd.get(), content.data(), content.size(), name).ok());
  }
  guard::testing::TempDir tmp{"guard-pending-owner"};
  const std::string& dir = tmp.path;
  std::unique_ptr<BlobStore> store;
  UniqueFd tree;
};

constexpr const char* kSession = "20261201-103252-5530b62";

BOOST_FIXTURE_TEST_CASE(AdoptedNamesStartWithTheOwnerSession, StoreFixture) {
  store->SetPendingOwner(kSession);
  Write("a", "content a\n");
  std::string name;
  BOOST_REQUIRE(store->AdoptByLink(tree.get(), "a", &name).ok());
  BOOST_TEST(name.rfind(std::string(kSession) + "-", 0) == 0u, name);
  BOOST_TEST(BlobStore::PendingNameOf(name, kSession));
}

BOOST_AUTO_TEST_CASE(PendingNameOfMatchesTheWholeIdOnly) {
  BOOST_TEST(BlobStore::PendingNameOf("20261201-103252-5530b62-0-deadbeef", kSession));
  // Another session's id that shares a prefix, an old pid-style name, the id itself.
  BOOST_TEST(!BlobStore::PendingNameOf("20261201-103252-5530b623-0-deadbeef", kSession));
  BOOST_TEST(!BlobStore::PendingNameOf("20261201-103252-5530b6-0-deadbeef", kSession));
  BOOST_TEST(!BlobStore::PendingNameOf("4242-0-deadbeef", kSession));
  BOOST_TEST(!BlobStore::PendingNameOf(kSession, kSession));
  BOOST_TEST(!BlobStore::PendingNameOf("4242-0-deadbeef", ""));
}

BOOST_FIXTURE_TEST_CASE(LinkCountTellsWhetherTheAdoptedFileIsStillThere, StoreFixture) {
  store->SetPendingOwner(kSession);
  Write("kept", "still in the tree\n");
  Write("gone", "removed from the tree\n");
  std::string kept, gone;
  BOOST_REQUIRE(store->AdoptByLink(tree.get(), "kept", &kept).ok());
  BOOST_REQUIRE(store->AdoptByLink(tree.get(), "gone", &gone).ok());
  BOOST_REQUIRE(::unlinkat(tree.get(), "gone", 0) == 0);
  uint64_t n = 0;
  BOOST_REQUIRE(store->PendingLinkCount(kept, &n).ok());
  BOOST_TEST(n == 2u);
  BOOST_REQUIRE(store->PendingLinkCount(gone, &n).ok());
  BOOST_TEST(n == 1u);

  BOOST_REQUIRE(store->RemovePending(kept).ok());
  BOOST_TEST(store->PendingLinkCount(kept, &n).IsNotFound());
  BOOST_TEST(fs::exists(dir + "/tree/kept"));
  BOOST_TEST(store->RemovePending(kept).ok());  // already gone: not an error
  BOOST_TEST(!store->RemovePending("../escape").ok());
}

}  // namespace
