// WatchSession over the real inotify source: Barrier() returns only once
// every change made before it is handed to the sink (a mark is exact), with
// the thread idle or not; a directory made and filled before its watch
// exists is caught whole; a burst past the kernel's queue overflows it and
// the rescan misses nothing.
#define BOOST_TEST_MODULE watch_session
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/blob_store.h"
#include "common/path_util.h"
#include "supervisor/watch/inotify_source.h"
#include "supervisor/watch/watch_session.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void Write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A source the test feeds by hand.
class FakeSource final : public WatchSource {
 public:
  Status Wait(std::vector<WatchHint>* out, std::chrono::milliseconds) override { return Drain(out); }
  Status Drain(std::vector<WatchHint>* out) override {
    std::lock_guard<std::mutex> lock(mu);
    out->insert(out->end(), queued.begin(), queued.end());
    queued.clear();
    ++drains;
    return Status::Ok();
  }
  std::mutex mu;
  std::vector<WatchHint> queued;
  int drains = 0;
};

struct Fixture {
  testing::TempDir tmp{"guard-watch-session"};
  std::string root = tmp.path + "/root";
  std::unique_ptr<BlobStore> store;
  std::mutex mu;
  // The last change seen of each path, root-relative: "type" or "absent".
  std::map<std::string, std::string> seen;
  std::map<std::string, FileState> last;  // the last change's state of each path
  size_t count = 0;
  std::unique_ptr<WatchSession> watch;
  InotifySource* inotify = nullptr;

  Fixture() {
    fs::create_directories(root);
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  }
  void Open(std::unique_ptr<WatchSource> source, std::chrono::milliseconds tick = 1h) {
    WatchedTreeOptions o;
    o.root = root;
    auto log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
    watch = std::make_unique<WatchSession>(
        o, store.get(),
        [this](const ObservedChange& c) {
          std::lock_guard<std::mutex> lock(mu);
          seen[PathRelativeTo(c.abs, root)] = FileTypeName(c.after.type);
          last[PathRelativeTo(c.abs, root)] = c.after;
          ++count;
          return Status::Ok();
        },
        log, WatchSession::Timing{tick});
    BaselineSummary summary;
    BOOST_REQUIRE(watch->Prepare(std::move(source), &summary).ok());
  }
  void OpenInotify(std::chrono::milliseconds tick = 1h) {
    std::unique_ptr<InotifySource> source;
    BOOST_REQUIRE(InotifySource::Open(root, {}, &source).ok());
    inotify = source.get();
    Open(std::move(source), tick);
  }
  std::string Seen(const std::string& rel) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = seen.find(rel);
    return it == seen.end() ? "-" : it->second;
  }
  std::string Abs(const std::string& rel) { return root + "/" + rel; }
};

BOOST_AUTO_TEST_CASE(BarrierReturnsOnceEveryEarlierChangeIsRecorded) {
  Fixture f;
  Write(f.Abs("kept"), "0");
  f.OpenInotify();
  // The thread ran its first round and now sleeps for an hour: only the
  // Barrier can have caught what follows.
  f.watch->Start();
  Write(f.Abs("kept"), "1");
  Write(f.Abs("made"), "m");
  fs::create_directories(f.Abs("d/e"));
  Write(f.Abs("d/e/f"), "f");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("kept") == "regular");
  BOOST_TEST(f.Seen("made") == "regular");
  BOOST_TEST(f.Seen("d") == "directory");
  BOOST_TEST(f.Seen("d/e") == "directory");
  BOOST_TEST(f.Seen("d/e/f") == "regular");
  // A change within microseconds of the last, with a Barrier between: each
  // state is its own change.
  const size_t before = f.count;
  Write(f.Abs("kept"), "2");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  Write(f.Abs("kept"), "3");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.count == before + 2);
  fs::remove(f.Abs("made"));
  BOOST_REQUIRE(f.watch->Stop().ok());
  BOOST_TEST(f.Seen("made") == "absent");
}

BOOST_AUTO_TEST_CASE(FilesMadeInANewDirectoryBeforeItsWatchAreCaughtAndItIsWatchedAfter) {
  Fixture f;
  f.OpenInotify();
  // Made and filled before the source has read the directory's creation,
  // so before it has a watch.
  fs::create_directories(f.Abs("n/m"));
  Write(f.Abs("n/m/early"), "early");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("n/m/early") == "regular");
  // Now watched, down to n/m: a change there is an event of its own.
  Write(f.Abs("n/m/late"), "late");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("n/m/late") == "regular");
  BOOST_TEST(f.inotify->watches() == 3u);
}

BOOST_AUTO_TEST_CASE(AQueueOverflowIsCaughtUpByARescanWithNothingMissed) {
  Fixture f;
  fs::create_directories(f.Abs("burst"));
  f.OpenInotify();
  unsigned long limit = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> limit;
  // Each file is three events (created, written, closed): past the queue.
  const unsigned long files = limit / 3 + 1000;
  for (unsigned long i = 0; i < files; ++i) Write(f.Abs("burst/" + std::to_string(i)), "x");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.inotify->overflows() >= 1u);
  BOOST_TEST(f.watch->rescans() >= 1u);
  for (unsigned long i = 0; i < files; ++i) {
    BOOST_TEST_CONTEXT(i) { BOOST_TEST(f.Seen("burst/" + std::to_string(i)) == "regular"); }
  }
}

BOOST_AUTO_TEST_CASE(ATreeRenamedIntoAndOutOfTheRootIsCreatedAndRemoved) {
  Fixture f;
  testing::TempDir outside{"guard-watch-outside"};
  fs::create_directories(outside.File("t/u"));
  Write(outside.File("t/u/x"), "x");
  fs::create_directories(f.Abs("leaving/sub"));
  Write(f.Abs("leaving/sub/y"), "y");
  f.OpenInotify();
  fs::rename(outside.File("t"), f.Abs("t"));
  fs::rename(f.Abs("leaving"), outside.File("left"));
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("t/u/x") == "regular");
  BOOST_TEST(f.Seen("leaving/sub/y") == "absent");
  BOOST_TEST(f.Seen("leaving") == "absent");
  BOOST_TEST(f.inotify->watches() == 3u);  // the root, t, t/u
  // What moved in is watched; what moved out is not.
  Write(f.Abs("t/u/z"), "z");
  Write(outside.File("left/sub/w"), "w");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("t/u/z") == "regular");
  BOOST_TEST(f.Seen("leaving/sub/w") == "-");
}

// renameat2(RENAME_EXCHANGE) of two directories queues "A moved away, B
// moved in, B moved away, A moved in": each tree must stay watched under
// its new name (a watch dropped by path alone left A's tree blind under B).
BOOST_AUTO_TEST_CASE(TwoDirectoriesExchangedAreWatchedUnderTheirNewNames) {
  Fixture f;
  fs::create_directories(f.Abs("A/s"));
  fs::create_directories(f.Abs("B/t"));
  Write(f.Abs("A/s/x"), "x");
  Write(f.Abs("B/t/y"), "y");
  f.OpenInotify();
  BOOST_REQUIRE(f.inotify->watches() == 5u);
  BOOST_REQUIRE(::renameat2(AT_FDCWD, f.Abs("A").c_str(), AT_FDCWD, f.Abs("B").c_str(), RENAME_EXCHANGE) == 0);
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("B/s/x") == "regular");
  BOOST_TEST(f.Seen("A/t/y") == "regular");
  BOOST_TEST(f.Seen("A/s/x") == "absent");
  BOOST_TEST(f.Seen("B/t/y") == "absent");
  BOOST_TEST(f.inotify->watches() == 5u);
  // Made after the source read the exchange: only a watch on each
  // directory, under its new name, can report them.
  Write(f.Abs("B/s/later"), "1");
  Write(f.Abs("A/t/later"), "2");
  fs::create_directories(f.Abs("B/new"));
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("B/s/later") == "regular");
  BOOST_TEST(f.Seen("A/t/later") == "regular");
  BOOST_TEST(f.Seen("B/new") == "directory");
  BOOST_TEST(f.inotify->watches() == 6u);
}

// Moved twice before the source reads either move, and a new directory
// made at the first name: each directory is watched under its own name.
BOOST_AUTO_TEST_CASE(ADirectoryMovedTwiceBeforeItsEventsAreReadIsWatchedAtItsLastName) {
  Fixture f;
  fs::create_directories(f.Abs("A/s"));
  f.OpenInotify();
  fs::rename(f.Abs("A"), f.Abs("B"));
  fs::rename(f.Abs("B"), f.Abs("C"));
  fs::create_directories(f.Abs("A"));
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("C/s") == "directory");
  BOOST_TEST(f.Seen("A/s") == "absent");
  BOOST_TEST(f.inotify->watches() == 4u);  // the root, C, C/s and the new A
  Write(f.Abs("C/s/later"), "1");
  Write(f.Abs("A/later"), "2");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("C/s/later") == "regular");
  BOOST_TEST(f.Seen("A/later") == "regular");
  BOOST_TEST(f.Seen("B/s/later") == "-");
}

// The root's own mode is a change of ".", as a call's record has it; a
// file made in the root is no change of the root.
BOOST_AUTO_TEST_CASE(AChmodOfTheRootIsAChangeOfDot) {
  Fixture f;
  BOOST_REQUIRE(::chmod(f.root.c_str(), 0755) == 0);
  f.OpenInotify();
  Write(f.Abs("made"), "m");
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen(".") == "-");
  BOOST_REQUIRE(::chmod(f.root.c_str(), 0700) == 0);
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen(".") == "directory");
  {
    std::lock_guard<std::mutex> lock(f.mu);
    BOOST_TEST(f.last["."].mode == 0700u);
  }
  BOOST_REQUIRE(::chmod(f.root.c_str(), 0755) == 0);
  BOOST_REQUIRE(f.watch->Stop().ok());
  std::lock_guard<std::mutex> lock(f.mu);
  BOOST_TEST(f.last["."].mode == 0755u);
}

// Bytes the store's objects take on disk.
uint64_t StoreBytes(const std::string& store) {
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(store)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

// A log appended to between looks is stored as its last version plus the
// new bytes (an append object), not whole at each look, and each version
// reads back whole.
BOOST_AUTO_TEST_CASE(ALogAppendedToBetweenLooksStoresItsNewBytesNotEachVersionWhole) {
  Fixture f;
  std::string content;
  uint64_t x = 0x9e3779b97f4a7c15ull;  // incompressible bytes: the store's size is the content's
  auto random_bytes = [&x](size_t n) {
    std::string out(n, '\0');
    for (char& c : out) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x);
    }
    return out;
  };
  content = random_bytes(2 << 20);
  Write(f.Abs("log"), content);
  f.OpenInotify();
  const uint64_t at_start = StoreBytes(f.tmp.path + "/store");
  constexpr int kAppends = 20;
  for (int i = 0; i < kAppends; ++i) {
    const std::string more = random_bytes(8192);
    std::ofstream(f.Abs("log"), std::ios::binary | std::ios::app) << more;
    content += more;
    BOOST_REQUIRE(f.watch->Barrier().ok());
  }
  const uint64_t grown = StoreBytes(f.tmp.path + "/store") - at_start;
  BOOST_TEST_MESSAGE("store grew by " << grown << " bytes for " << kAppends << " appends of 8 KiB to 2 MiB");
  // Whole versions would be 20 x 2 MiB; append objects hold each appended
  // byte a few times (the chain's halving), far under one more copy.
  BOOST_TEST(grown < (2u << 20));
  FileState after;
  {
    std::lock_guard<std::mutex> lock(f.mu);
    after = f.last["log"];
  }
  BOOST_REQUIRE(after.blob.kind == BlobRef::Kind::kKey);
  std::string read;
  BOOST_REQUIRE(f.store->ReadToString(after.blob, &read).ok());
  BOOST_TEST((read == content));
  BOOST_REQUIRE(f.watch->Stop().ok());
}

BOOST_AUTO_TEST_CASE(BarrierDrainsTheSourceAndAKAllHintRescans) {
  Fixture f;
  auto owned = std::make_unique<FakeSource>();
  FakeSource* source = owned.get();
  Write(f.Abs("a"), "1");
  Write(f.Abs("b"), "1");
  f.Open(std::move(owned));
  Write(f.Abs("a"), "2");
  Write(f.Abs("b"), "2");
  {
    std::lock_guard<std::mutex> lock(source->mu);
    source->queued.push_back({f.Abs("a"), WatchHint::Scope::kPath});
  }
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("a") == "regular");
  BOOST_TEST(f.Seen("b") == "-");  // no hint, not looked at
  {
    std::lock_guard<std::mutex> lock(source->mu);
    source->queued.push_back({f.root, WatchHint::Scope::kAll});
  }
  BOOST_REQUIRE(f.watch->Barrier().ok());
  BOOST_TEST(f.Seen("b") == "regular");
  BOOST_TEST(f.watch->rescans() == 1u);
}

}  // namespace
}  // namespace guard
