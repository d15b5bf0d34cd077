// FedSink (supervisor/session/shim_feed.h), the sink the tracer is given when
// the shim runs too: the orders it keeps between the tracer's calls and the
// shim's, on a real ring segment with a ShimFeed attached (no feed thread:
// FedSink drains the ring itself, under the feed's mutex), a Capture over an
// in-memory log (tests/unit/capture/fake_capture_log.h) and a temporary
// tree. The unit twins of tests/e2e/capture_race_test.cc's
// ATracedCallIsJournaledAfterItsThreadsEarlierShimCalls,
// ATracedCallWaitsForAShimCallOnItsName and
// AShimCallWaitsForATracedCallOnItsName.
//
// A traced call is held (Verdict::retry_later) while the ring's head is a
// record claimed and not yet published (its records behind may be the
// thread's own earlier shim calls), or while a live thread of another
// process holds one of its names' locks (a shim call between its look and
// its OUTCOME), each for at most kHoldLimitNs. A traced call recorded and
// watched to its exit holds its names' locks until its end.
#define BOOST_TEST_MODULE fed_sink
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/file_io.h"
#include "common/ring_format.h"
#include "common/ring_producer.h"
#include "common/shim_record.h"
#include "common/unique_fd.h"
#include "supervisor/capture/capture.h"
#include "supervisor/session/shim_feed.h"
#include "tests/unit/capture/core_under_test.h"
#include "tests/unit/common/ring_test_util.h"
#include "tests/unit/support/parked_process.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

// A record type the feed skips (not the shim's CALL or OUTCOME).
constexpr uint32_t kSkippedType = GUARD_RING_TYPE_FIRST_USER + 7;

pid_t MyTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// A put into the ring that stops once its record is claimed and filled, but
// before it is published, on a thread of this process (a live producer),
// until Publish.
class StalledPut {
 public:
  StalledPut(const ring_test::TestRing& ring, uint32_t type, std::vector<uint8_t> payload)
      : producer_(ring.Producer()), payload_(std::move(payload)) {
    producer_.test_hook = Hook;
    producer_.test_hook_arg = this;
    thread_ = std::thread([this, type] {
      result_ = guard_ring_put(&producer_, type, payload_.data(), static_cast<uint32_t>(payload_.size()));
    });
    ring_test::HangGuard hang(30);
    while (!filled_.load(std::memory_order_acquire)) {
      BOOST_REQUIRE_MESSAGE(!hang.Expired(), "the put never reached its unpublished state");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~StalledPut() { Publish(); }
  StalledPut(const StalledPut&) = delete;
  StalledPut& operator=(const StalledPut&) = delete;

  // Lets the put publish its record, and waits for it to have.
  void Publish() {
    if (!thread_.joinable()) return;
    release_.store(true, std::memory_order_release);
    thread_.join();
    BOOST_TEST(result_ == 0);
  }

 private:
  static void Hook(void* arg, guard_ring_phase phase) {
    auto* self = static_cast<StalledPut*>(arg);
    if (phase != GUARD_RING_PHASE_FILLED) return;
    self->filled_.store(true, std::memory_order_release);
    while (!self->release_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  guard_ring_producer producer_;
  std::vector<uint8_t> payload_;
  std::atomic<bool> filled_{false}, release_{false};
  int result_ = -1;
  std::thread thread_;
};

// A shim CALL record (common/shim_record.h) of an mkdir of `abs`, absent
// before the call, by thread `tid`.
std::vector<uint8_t> ShimMkdirCall(pid_t tid, const std::string& abs) {
  guard_shim_call call;
  std::memset(&call, 0, sizeof call);
  call.call_id = 1;
  call.tid = tid;
  call.action = GUARD_SHIM_MKDIR;
  call.mode = 0755;
  call.before1.err = ENOENT;
  call.before2.err = -1;  // not made
  const std::string comm = "test";
  call.lengths[GUARD_SHIM_STR_PATH1] = static_cast<uint16_t>(abs.size());
  call.lengths[GUARD_SHIM_STR_COMM] = static_cast<uint16_t>(comm.size());
  std::vector<uint8_t> out(sizeof call);
  std::memcpy(out.data(), &call, sizeof call);
  out.insert(out.end(), abs.begin(), abs.end());
  out.insert(out.end(), comm.begin(), comm.end());
  return out;
}

// The tid of a thread that is gone: a child that has exited and been reaped.
pid_t DeadTid() {
  pid_t pid = ring_test::Spawn([] { return 0; });
  int status = 0;
  BOOST_REQUIRE(waitpid(pid, &status, 0) == pid);
  return pid;
}

// A tree with root/a ("A") and root/b ("B"), a ring, and a FedSink over a
// feed attached to it and a Capture of the root.
struct Fixture : testing::CoreUnderTest {
  ring_test::TestRing ring{64 * 1024};
  std::mutex mu;
  std::unique_ptr<ShimFeed> feed;
  std::unique_ptr<FedSink> sink;
  const pid_t tid = MyTid();  // the traced calls' thread

  Fixture() : CoreUnderTest("guard-fed-sink") {
    BOOST_REQUIRE(testing::WriteStringToFile(Abs("a"), "A"));
    BOOST_REQUIRE(testing::WriteStringToFile(Abs("b"), "B"));
    feed = std::make_unique<ShimFeed>(capture.get(), &mu, "test", logger);
    BOOST_REQUIRE(feed->Attach(ring.segment.base(), ring.segment.size()).ok());
    sink = std::make_unique<FedSink>(capture.get(), feed.get(), &mu);
  }

  // The traced call VERB P [Q] of thread `tid`, as the tracer hands it
  // over: holdable, held for no time yet.
  Mutation Traced(const std::string& verb, const std::string& p, const std::string& q = "") const {
    Mutation m = Call(tid, verb, p, q);
    m.holdable = true;
    return m;
  }

  uint32_t* LockWord(const std::string& p) const {
    const std::string abs = Abs(p);
    return &ring.header()->name_locks[guard_ring_name_lock_index(abs.data(), abs.size())];
  }
  pid_t LockOwner(const std::string& p) const {
    return static_cast<pid_t>(__atomic_load_n(LockWord(p), __ATOMIC_ACQUIRE) & GUARD_RING_LOCK_TID_MASK);
  }
  // "free", "mine" (thread `tid`), or "theirs" (any other thread).
  std::string LockSays(const std::string& p) const {
    const pid_t owner = LockOwner(p);
    return owner == 0 ? "free" : owner == tid ? "mine" : "theirs";
  }
};

// --- What holds a traced call, and for how long (cases 1 to 3) ---

enum class Obstacle {
  kNone,
  kUnpublishedHead,   // a record at the ring's head, claimed by a live producer, not yet published
  kLockOfLiveThread,  // a's name lock, held by a live thread of another process
  kLockOfDeadThread,  // a's name lock, left by a thread that is gone
};

enum class Hold {
  kFresh,      // the producer can hold the call (the tracer), and has held it for no time yet
  kPastLimit,  // it has held it for kHoldLimitNs already
  kNever,      // the producer cannot hold it
};

struct HoldRow {
  const char* name;
  Obstacle obstacle;
  Hold hold;
  const char* verdict;  // VerdictWord of FedSink::Before of "trunc a"
  std::vector<const char*> records;
  const char* lock;  // LockSays("a") after Before
};

const HoldRow kHoldRows[] = {
    {"a call with nothing in its way is recorded and keeps its name's lock", Obstacle::kNone, Hold::kFresh, "watch",
     {"modify a <A>"}, "mine"},
    // Unit twin of ATracedCallIsJournaledAfterItsThreadsEarlierShimCalls.
    {"an unpublished record at the ring's head holds the call, which keeps no lock", Obstacle::kUnpublishedHead,
     Hold::kFresh, "retry", {}, "free"},
    {"past the hold limit an unpublished head holds the call no longer", Obstacle::kUnpublishedHead,
     Hold::kPastLimit, "watch", {"modify a <A>"}, "mine"},
    {"a call its producer cannot hold is not held for an unpublished head", Obstacle::kUnpublishedHead,
     Hold::kNever, "watch", {"modify a <A>"}, "free"},
    // Unit twin of ATracedCallWaitsForAShimCallOnItsName.
    {"a live thread of another process holding the name's lock holds the call", Obstacle::kLockOfLiveThread,
     Hold::kFresh, "retry", {}, "theirs"},
    {"past the hold limit the call goes on without that lock", Obstacle::kLockOfLiveThread, Hold::kPastLimit,
     "watch", {"modify a <A>"}, "theirs"},
    {"a name lock of a thread that is gone is taken over", Obstacle::kLockOfDeadThread, Hold::kFresh, "watch",
     {"modify a <A>"}, "mine"},
};

void RunHoldRow(const HoldRow& row) {
  BOOST_TEST_CONTEXT(row.name) {
    Fixture f;
    std::unique_ptr<StalledPut> put;
    std::unique_ptr<testing::ParkedProcess> other;
    if (row.obstacle == Obstacle::kUnpublishedHead) {
      put = std::make_unique<StalledPut>(f.ring, kSkippedType, std::vector<uint8_t>(24, 7));
    } else if (row.obstacle == Obstacle::kLockOfLiveThread) {
      other = std::make_unique<testing::ParkedProcess>([] { return true; });
      *f.LockWord("a") = static_cast<uint32_t>(other->pid());
    } else if (row.obstacle == Obstacle::kLockOfDeadThread) {
      *f.LockWord("a") = static_cast<uint32_t>(DeadTid());
    }
    Mutation m = f.Traced("trunc", "a");
    m.holdable = row.hold != Hold::kNever;
    if (row.hold == Hold::kPastLimit) m.held_ns = kHoldLimitNs;
    BOOST_TEST(testing::VerdictWord(f.sink->Before(m)) == row.verdict);
    const std::vector<std::string> want(row.records.begin(), row.records.end());
    BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
    BOOST_TEST(f.LockSays("a") == row.lock);
  }
}

BOOST_AUTO_TEST_CASE(WhatHoldsATracedCallTable) {
  for (const HoldRow& row : kHoldRows) RunHoldRow(row);
}

// Unit twin of ATracedCallIsJournaledAfterItsThreadsEarlierShimCalls: the
// thread's own shim call (an mkdir of s), published, sits behind another
// producer's record, claimed and not yet published, when the thread's
// traced call stops: the traced call is held while the drain has only
// stopped at that record; handed back, the drain reads past it (docs/ring.md,
// "Reading past a claim") and delivers the shim call, and the traced call
// is journaled after it. The record read past comes once published.
BOOST_AUTO_TEST_CASE(ATracedCallIsJournaledAfterItsThreadsShimCallsBehindAnUnpublishedRecord) {
  Fixture f;
  StalledPut head(f.ring, kSkippedType, std::vector<uint8_t>(24, 7));
  guard_ring_producer shim = f.ring.Producer();
  const std::vector<uint8_t> call = ShimMkdirCall(f.tid, f.Abs("s"));
  const uint32_t size = static_cast<uint32_t>(call.size());
  BOOST_REQUIRE_EQUAL(guard_ring_put(&shim, GUARD_SHIM_RECORD_CALL, call.data(), size), 0);
  BOOST_TEST(testing::VerdictWord(f.sink->Before(f.Traced("trunc", "a"))) == "retry");
  BOOST_TEST(f.log->Lines().empty());  // the shim call behind the head is not delivered yet
  // Handed back, well within the hold limit: not held again.
  Mutation again = f.Traced("trunc", "a");
  again.held_ns = 100 * 1000;
  BOOST_TEST(testing::VerdictWord(f.sink->Before(again)) == "watch");
  const std::vector<std::string> want = {"mkdir s", "modify a <A>"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
  BOOST_TEST(f.feed->calls() == 1u);
  BOOST_TEST(f.feed->malformed() == 0u);  // the head: not delivered while unpublished
  head.Publish();
  f.sink->After(f.tid, 3);  // drains
  BOOST_TEST(f.feed->malformed() == 1u);  // the head: a record of a type the feed skips
}

// The thread's own shim call, claimed and not yet published at the head,
// holds its traced call the same way.
BOOST_AUTO_TEST_CASE(ATracedCallIsJournaledAfterItsThreadsShimCallHeldUnpublished) {
  Fixture f;
  StalledPut put(f.ring, GUARD_SHIM_RECORD_CALL, ShimMkdirCall(f.tid, f.Abs("s")));
  BOOST_TEST(testing::VerdictWord(f.sink->Before(f.Traced("trunc", "a"))) == "retry");
  BOOST_TEST(f.log->Lines().empty());
  put.Publish();
  Mutation again = f.Traced("trunc", "a");
  again.held_ns = 1000;
  BOOST_TEST(testing::VerdictWord(f.sink->Before(again)) == "watch");
  const std::vector<std::string> want = {"mkdir s", "modify a <A>"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
}

// Past the limit a call is recorded without the records behind the head;
// that record, waited out once, holds up no later call.
BOOST_AUTO_TEST_CASE(ARecordOneCallWaitedOutHoldsUpNoOther) {
  Fixture f;
  StalledPut put(f.ring, kSkippedType, std::vector<uint8_t>(24, 7));
  Mutation first = f.Traced("trunc", "a");
  first.held_ns = kHoldLimitNs;
  BOOST_TEST(testing::VerdictWord(f.sink->Before(first)) == "watch");
  f.sink->After(f.tid, 3);
  BOOST_TEST(testing::VerdictWord(f.sink->Before(f.Traced("unlink", "b"))) == "settle");
  const std::vector<std::string> want = {"modify a <A>", "outcome 1 ok regular", "delete b <B>"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
}

// --- The name locks a traced call holds, until when (case 4) ---
// Unit twin of AShimCallWaitsForATracedCallOnItsName.

struct LockRow {
  const char* name;
  const char* call;   // "VERB P [Q]", as Fixture::Traced
  const char* verdict;
  const char* held;   // LockSays of each of the call's names after Before ("mine" or "free")
  const char* end;    // how the call ends: "after", "returned", "abandon", or "" (no end reported)
};

const LockRow kLockRows[] = {
    {"a call watched to its exit keeps its name's lock until After", "trunc a", "watch", "mine", "after"},
    {"a call that died inside keeps its name's lock until Abandon", "trunc a", "watch", "mine", "abandon"},
    {"an exchange keeps both its names' locks until After", "exchange a b", "watch", "mine", "after"},
    {"a call let run without its exit stop keeps its lock until its thread's next stop", "unlink a", "settle", "mine",
     "returned"},
    {"an open for writing of a missing name is watched to its exit, holding its lock (another could make the name first)",
     "trunc missing", "watch", "mine", "after"},
    {"a call that is not recorded gives its lock back at once", "trunc .", "run", "free", ""},
};

void RunLockRow(const LockRow& row) {
  BOOST_TEST_CONTEXT(row.name) {
    Fixture f;
    std::istringstream in(row.call);
    std::string verb, p, q;
    in >> verb >> p >> q;
    std::vector<std::string> names = {p};
    if (!q.empty()) names.push_back(q);
    BOOST_TEST(testing::VerdictWord(f.sink->Before(f.Traced(verb, p, q))) == row.verdict);
    for (const std::string& name : names) BOOST_TEST(f.LockSays(name) == row.held, name);
    const std::string end = row.end;
    if (end == "after") f.sink->After(f.tid, 0);
    if (end == "returned") f.sink->Returned(f.tid);
    if (end == "abandon") f.sink->Abandon(f.tid);
    for (const std::string& name : names) BOOST_TEST(f.LockSays(name) == "free", name);
  }
}

BOOST_AUTO_TEST_CASE(TheNameLocksATracedCallHoldsTable) {
  for (const LockRow& row : kLockRows) RunLockRow(row);
}

// A release bumps the lock's generation: a shim call that looked at the
// name before taking its lock can tell that a traced call changed it.
BOOST_AUTO_TEST_CASE(GivingBackATracedCallsLockBumpsItsGeneration) {
  Fixture f;
  const uint32_t before = *f.LockWord("a") & GUARD_RING_LOCK_GEN_MASK;
  BOOST_TEST(testing::VerdictWord(f.sink->Before(f.Traced("trunc", "a"))) == "watch");
  f.sink->After(f.tid, 0);
  const uint32_t after = *f.LockWord("a") & GUARD_RING_LOCK_GEN_MASK;
  BOOST_TEST(after != before);
}

}  // namespace
}  // namespace guard
