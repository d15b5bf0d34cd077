// GroupCommit's interval (capture.sync_every): records appended are made
// durable by the commit thread once the interval has passed, not before, and
// Stop() commits what is left whatever the interval.
#define BOOST_TEST_MODULE group_commit
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/blob_store.h"
#include "common/journal_writer.h"
#include "supervisor/session/group_commit.h"
#include "tests/unit/support/manual_pacer.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

using namespace std::chrono_literals;

struct Fixture {
  testing::TempDir tmp{"guard-group-commit"};
  const std::string& dir = tmp.path;
  std::unique_ptr<BlobStore> store;
  std::unique_ptr<JournalWriter> journal;

  Fixture() {
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
    BOOST_REQUIRE(JournalWriter::Create(dir + "/journal", &journal).ok());
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

// The commit thread's time is the test's (ManualPacer): while it waits in
// its pacer, it commits nothing.
BOOST_FIXTURE_TEST_CASE(ALongIntervalHoldsTheCommitBackUntilStop, Fixture) {
  testing::ManualPacer pacer;
  GroupCommit commit(journal.get(), store.get(), nullptr, std::chrono::hours(1), &pacer);
  const uint64_t synced_before = journal->synced_size();
  AppendOne();
  pacer.AwaitWaits(1);
  BOOST_TEST(pacer.last_interval() == std::chrono::nanoseconds(std::chrono::hours(1)));
  pacer.Advance(59min);  // with the default 100 ms, many rounds; with an hour, none
  BOOST_TEST(commit.commits() == 0u);
  BOOST_TEST(journal->dirty());
  BOOST_TEST(journal->synced_size() == synced_before);
  BOOST_REQUIRE(commit.Stop().ok());
  BOOST_TEST(commit.commits() == 1u);
  BOOST_TEST(!journal->dirty());
  BOOST_TEST(journal->synced_size() == journal->size());
  BOOST_TEST(journal->synced_size() > synced_before);
}

BOOST_FIXTURE_TEST_CASE(TheCommitComesOnceTheIntervalHasPassed, Fixture) {
  testing::ManualPacer pacer;
  GroupCommit commit(journal.get(), store.get(), nullptr, 100ms, &pacer);
  AppendOne();
  pacer.AwaitWaits(1);
  BOOST_TEST(commit.commits() == 0u);
  pacer.Advance(100ms);
  pacer.AwaitWaits(2);  // the round ran; the thread waits for the next
  BOOST_TEST(commit.commits() == 1u);
  BOOST_TEST(!journal->dirty());
  pacer.Advance(100ms);
  pacer.AwaitWaits(3);
  BOOST_TEST(commit.commits() == 1u);  // nothing new to commit
  BOOST_REQUIRE(commit.Stop().ok());
  BOOST_TEST(commit.commits() == 1u);
}

// On the steady clock (no pacer given).
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
