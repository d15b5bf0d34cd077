// GroupCommit's interval (capture.sync_every): records appended are made
// durable by the commit thread once the interval has passed, not before, and
// Stop() commits what is left whatever the interval.
#define BOOST_TEST_MODULE group_commit
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "supervisor/session/group_commit.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct Fixture {
  std::string dir;
  std::unique_ptr<BlobStore> store;
  std::unique_ptr<JournalWriter> journal;

  Fixture() {
    char tmpl[] = "/tmp/guard-group-commit-XXXXXX";
    BOOST_REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
    BOOST_REQUIRE(JournalWriter::Create(dir + "/journal", &journal).ok());
  }
  ~Fixture() {
    journal.reset();
    store.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void AppendOne() {
    Record r;
    r.kind = OpKind::kModify;
    r.seq = 1;
    r.path = "a";
    BOOST_REQUIRE(journal->Append(r).ok());
    BOOST_REQUIRE(journal->dirty());
  }
};

BOOST_FIXTURE_TEST_CASE(ALongIntervalHoldsTheCommitBackUntilStop, Fixture) {
  GroupCommit commit(journal.get(), store.get(), nullptr, std::chrono::hours(1));
  const uint64_t synced_before = journal->synced_size();
  AppendOne();
  // With the default 100 ms this much time would have seen several commit
  // rounds; with an hour, none may have run.
  std::this_thread::sleep_for(400ms);
  BOOST_TEST(commit.commits() == 0u);
  BOOST_TEST(journal->dirty());
  BOOST_TEST(journal->synced_size() == synced_before);
  BOOST_REQUIRE(commit.Stop().ok());
  BOOST_TEST(commit.commits() == 1u);
  BOOST_TEST(!journal->dirty());
  BOOST_TEST(journal->synced_size() == journal->size());
  BOOST_TEST(journal->synced_size() > synced_before);
}

BOOST_FIXTURE_TEST_CASE(AShortIntervalCommitsWhileItRuns, Fixture) {
  GroupCommit commit(journal.get(), store.get(), nullptr, 20ms);
  AppendOne();
  // However slow the machine, the commit comes without Stop.
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while (commit.commits() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
  BOOST_TEST(commit.commits() == 1u);
  BOOST_TEST(!journal->dirty());
  BOOST_REQUIRE(commit.Stop().ok());
  BOOST_TEST(commit.commits() == 1u);  // nothing new to commit
}

}  // namespace
}  // namespace guard
