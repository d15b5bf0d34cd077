// WorkSaver against a ring whose reports lag (WorkSaver::SetLateCalls): a
// file read while the ring had not yet delivered every call claimed before
// the read gets its post-image once the reports catch up, not never, and
// not if one of those late reports named it.
#define BOOST_TEST_MODULE work_saver
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/blob_store.h"
#include "common/journal_reader.h"
#include "common/journal_writer.h"
#include "supervisor/capture/recorder.h"
#include "supervisor/session/work_saver.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A fresh tree, store and journal, and a saver with fast ticks over them,
// fed by a fake ring whose positions the test sets.
struct Fixture {
  testing::TempDir tmp{"guard-work-saver"};
  const std::string& dir = tmp.path;
  std::string root;
  std::unique_ptr<BlobStore> store;
  std::unique_ptr<Recorder> recorder;
  std::unique_ptr<WorkSaver> saver;
  std::atomic<uint64_t> claimed{0}, delivered{0};
  std::shared_ptr<spdlog::logger> log;

  Fixture() {
    root = dir + "/root";
    fs::create_directories(root);
    BOOST_REQUIRE(BlobStore::Open(dir + "/store", &store).ok());
    std::unique_ptr<JournalWriter> journal;
    BOOST_REQUIRE(JournalWriter::Create(dir + "/journal", &journal).ok());
    SessionMeta meta;
    meta.id = "test";
    meta.root = root;
    log = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::null_sink_mt>());
    recorder = std::make_unique<Recorder>(meta, dir + "/meta.json", std::move(journal), store.get(), log);
    MakeSaver(FastTicks());
  }
  static WorkSaver::Timing FastTicks() {
    WorkSaver::Timing timing;
    timing.tick = 10ms;
    timing.heartbeat = 50ms;
    return timing;
  }
  void MakeSaver(const WorkSaver::Timing& timing) {
    saver = std::make_unique<WorkSaver>(root, recorder.get(), dir + "/alive", log, timing);
    saver->SetLateCalls([this] { return claimed.load(); }, [this] { return delivered.load(); });
  }
  ~Fixture() {
    saver.reset();
    recorder.reset();
    store.reset();
  }

  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root + "/" + rel, std::ios::binary | std::ios::trunc) << text;
  }
  // What a call on `rel` reports: it may leave something new there.
  void Report(const std::string& rel) {
    WorkSaver::Call call;
    call.changed = {rel};
    saver->CallBegins(call);
    saver->CallEnds(call, true);
  }
  // The contents of the post-images of `rel` in the journal, in order.
  std::vector<std::string> PostImages(const std::string& rel) {
    std::vector<Record> records;
    std::vector<std::string> problems;
    BOOST_REQUIRE(ReadAllRecords(dir + "/journal", &records, &problems).ok());
    std::vector<std::string> out;
    for (const Record& r : records) {
      if (!IsPostImage(r) || r.path != rel) continue;
      std::string text;
      BOOST_REQUIRE(store->ReadToString(r.after.blob, &text).ok());
      out.push_back(text);
    }
    return out;
  }
  // Writes `rel`, starts the saver with the ring 50 reports behind, reports
  // a call on `rel` and waits until the saver's read of it waits for them.
  void StartWithAReadWaiting(const std::string& rel, const std::string& text) {
    claimed = 100;
    delivered = 50;
    Write(rel, text);
    BOOST_REQUIRE(saver->Start().ok());
    Report(rel);
    BOOST_REQUIRE(WaitFor([&] { return saver->late_deferred() >= 1; }));
  }
  // Waits (without a time limit that a slow machine could miss: 60 s) for `done`.
  template <class F>
  bool WaitFor(F done) {
    for (int i = 0; i < 60000 && !done(); ++i) std::this_thread::sleep_for(1ms);
    return done();
  }
};

// Ticks made by the test (TickForTest): the saver's own thread ticks once
// an hour, so what each tick sees is what the test reported before it.
WorkSaver::Timing ManualTicks(std::chrono::milliseconds burst_wait) {
  WorkSaver::Timing timing = Fixture::FastTicks();
  timing.tick = 3600s;
  timing.burst_wait = burst_wait;
  return timing;
}

// Ticked by the test (ManualTicks): what each tick did is known when it returns.
BOOST_FIXTURE_TEST_CASE(AReadWaitingForTheRingIsRecordedOnceItCatchesUpWithoutReadingAgain, Fixture) {
  MakeSaver(ManualTicks(FastTicks().burst_wait));
  claimed = 100;
  delivered = 50;
  Write("a.txt", "one\n");
  BOOST_REQUIRE(saver->Start().ok());
  Report("a.txt");
  for (int tick = 0; tick < 5 && saver->late_deferred() == 0; ++tick) saver->TickForTest();
  BOOST_REQUIRE(saver->late_deferred() == 1u);
  for (int tick = 0; tick < 3; ++tick) saver->TickForTest();  // nothing may be appended meanwhile
  BOOST_TEST(saver->saved() == 0u);
  BOOST_TEST(saver->late_deferred() == 1u, "read again while it waited");
  delivered = 100;
  saver->TickForTest();
  BOOST_TEST(saver->saved() == 1u);
  saver->Stop();
  BOOST_TEST(saver->late_dropped() == 0u);
  BOOST_TEST(PostImages("a.txt") == std::vector<std::string>{"one\n"});
}

// A ring that is always behind where it was claimed a moment ago, as during a
// burst the feed cannot keep up with: a read right after its claim never
// sees its reports delivered at once, but soon after.
BOOST_FIXTURE_TEST_CASE(AFileIsSavedWhileTheRingKeepsLaggingBehind, Fixture) {
  claimed = 1000;  // behind from the start, whenever the ring's thread first runs
  delivered = 980;
  Write("b.txt", "two\n");
  std::atomic<bool> stop{false};
  std::thread ring([&] {
    while (!stop) {
      claimed += 1;
      std::this_thread::sleep_for(1ms);
      delivered = claimed - 20;  // 20 claims behind: about 20 ms
    }
  });
  BOOST_REQUIRE(saver->Start().ok());
  Report("b.txt");
  bool saved = WaitFor([&] { return saver->saved() >= 1; });
  stop = true;
  ring.join();
  saver->Stop();
  BOOST_REQUIRE(saved);
  BOOST_TEST(PostImages("b.txt") == std::vector<std::string>{"two\n"});
}

// A late report names the path read: what was read may predate that call's
// change, so it is dropped, and the path is read again.
BOOST_FIXTURE_TEST_CASE(AReadThatALateReportNamesIsDroppedAndReadAgain, Fixture) {
  StartWithAReadWaiting("c.txt", "before\n");
  // The late call: it changed the file, and its report arrives now.
  Write("c.txt", "after the late call\n");
  Report("c.txt");
  delivered = 100;
  BOOST_REQUIRE(WaitFor([&] { return saver->saved() >= 1; }));
  saver->Stop();
  BOOST_TEST(saver->late_dropped() == 1u);
  BOOST_TEST(PostImages("c.txt") == std::vector<std::string>{"after the late call\n"});
}

// Stopped while a read waits (the feed has delivered everything by then,
// run_command.cc stops it first): Stop appends it.
BOOST_FIXTURE_TEST_CASE(StopAppendsAReadThatWaitedOnceTheRingIsDelivered, Fixture) {
  StartWithAReadWaiting("d.txt", "four\n");
  delivered = 100;
  saver->Stop();
  BOOST_TEST(saver->saved() == 1u);
  BOOST_TEST(PostImages("d.txt") == std::vector<std::string>{"four\n"});
}

// What a burst reports between two ticks: calls on other paths, far more
// than burst_calls a tick.
void ReportBurst(Fixture* f) {
  for (int i = 0; i < 200; ++i) f->Report("burst/" + std::to_string(i % 8));
}

// While the burst lasts the saver leaves the file alone (not even an
// lstat); the first ticks after it save it, with what it holds.
BOOST_FIXTURE_TEST_CASE(ASaveWaitsWhileABurstLastsAndIsMadeWhenItEnds, Fixture) {
  MakeSaver(ManualTicks(600s));
  Write("e.txt", "five\n");
  BOOST_REQUIRE(saver->Start().ok());
  Report("e.txt");
  for (int tick = 0; tick < 3; ++tick) {
    ReportBurst(this);
    saver->TickForTest();
  }
  BOOST_TEST(saver->burst_ticks() == 3u);
  BOOST_TEST(saver->burst_held() >= 3u);
  BOOST_TEST(PostImages("e.txt").empty(), "saved during the burst");
  // The burst is over: one tick sees the file, the next finds it unchanged.
  saver->TickForTest();
  saver->TickForTest();
  BOOST_TEST(saver->burst_ticks() == 3u);
  saver->Stop();
  BOOST_TEST(PostImages("e.txt") == std::vector<std::string>{"five\n"});
}

// A burst that never ends holds a path back for burst_wait from its first
// change, no longer: without that bound this file would wait for the seal.
BOOST_FIXTURE_TEST_CASE(ABurstThatNeverEndsHoldsASaveBackForBurstWaitAtMost, Fixture) {
  MakeSaver(ManualTicks(50ms));
  Write("f.txt", "six\n");
  BOOST_REQUIRE(saver->Start().ok());
  Report("f.txt");
  ReportBurst(this);
  saver->TickForTest();  // held: changed less than 50 ms ago
  const uint64_t held_young = saver->burst_held();
  std::this_thread::sleep_for(60ms);
  for (int tick = 0; tick < 2; ++tick) {  // seen, then saved, the burst going on
    ReportBurst(this);
    saver->TickForTest();
  }
  BOOST_TEST(saver->burst_ticks() == 3u);
  BOOST_TEST(held_young >= 1u);
  saver->Stop();
  BOOST_TEST(PostImages("f.txt") == std::vector<std::string>{"six\n"});
}

}  // namespace
}  // namespace guard
