// The ring within one process (and its vfork/fork children): the segment,
// the framing, wrap-around, records as long as the ring, puts from signal
// handlers, a consumer that is gone. Many producer processes, kills and stops
// are in ring_processes_test.cc.
#define BOOST_TEST_MODULE ring
#include <boost/test/unit_test.hpp>

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "ring_test_util.h"

using guard::RingConsumer;
using guard::RingRecord;
using guard::RingSegment;
using guard::Status;
using namespace ring_test;

BOOST_AUTO_TEST_CASE(SegmentIsOwnerOnlyAndNamedWith128RandomBits) {
  TestRing a(4096), b(4096);
  BOOST_TEST(guard::IsRingSegmentName(a.segment.name()));
  BOOST_TEST(a.segment.name() != b.segment.name());
  BOOST_TEST(a.segment.name().size() == std::string("guard-ring-").size() + 32);
  struct stat st;
  BOOST_REQUIRE(::stat(("/dev/shm/" + a.segment.name()).c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0600u);
  BOOST_TEST(st.st_uid == ::getuid());
  BOOST_TEST(static_cast<uint64_t>(st.st_size) == GUARD_RING_HEADER_SIZE + 4096u);
}

BOOST_AUTO_TEST_CASE(SegmentLeavesNoDescriptorOpen) {
  TestRing ring(4096);
  DIR* d = ::opendir("/proc/self/fd");
  BOOST_REQUIRE(d != nullptr);
  int found = 0;
  while (dirent* e = ::readdir(d)) {
    char target[512];
    std::string link = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::string(target).find("guard-ring-") != std::string::npos) ++found;
  }
  ::closedir(d);
  BOOST_TEST(found == 0);
}

BOOST_AUTO_TEST_CASE(SegmentOpenedByNameSharesTheRingAndRemoveEndsIt) {
  TestRing ring(8192);
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 0, 40), 0);

  RingSegment again;
  Status st = RingSegment::Open(ring.segment.name(), &again);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(again.base(), again.size()).ok());
  Tally t;
  BOOST_TEST(c.Drain(t.Handler()) == 1u);
  BOOST_TEST(t.bad == 0u);

  BOOST_REQUIRE(RingSegment::Remove(ring.segment.name()).ok());
  BOOST_TEST(RingSegment::Remove(ring.segment.name()).ok());  // already gone: fine
  RingSegment gone;
  BOOST_TEST(RingSegment::Open(ring.segment.name(), &gone).IsNotFound());
  BOOST_TEST(!RingSegment::Open("../etc/passwd", &gone).ok());
}

BOOST_AUTO_TEST_CASE(ProducerRefusesWhatIsNotARingOfThisVersionAndSize) {
  TestRing ring(4096);
  guard_ring_producer p;
  BOOST_TEST(guard_ring_producer_init(&p, ring.segment.base(), ring.segment.size() - 1) == -EINVAL);
  ring.header()->version = GUARD_RING_VERSION + 1;
  BOOST_TEST(guard_ring_producer_init(&p, ring.segment.base(), ring.segment.size()) == -EPROTO);
  ring.header()->version = GUARD_RING_VERSION;
  ring.header()->magic ^= 1;
  BOOST_TEST(guard_ring_producer_init(&p, ring.segment.base(), ring.segment.size()) == -EINVAL);
  ring.header()->magic ^= 1;
  BOOST_TEST(guard_ring_producer_init(&p, ring.segment.base(), ring.segment.size()) == 0);
}

BOOST_AUTO_TEST_CASE(RecordsComeOutInOrderWithTheirProducer) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  const char a[] = "first";
  guard_ring_part parts[] = {{"sec", 3}, {"ond", 3}};
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, a, 5), 0);
  BOOST_REQUIRE_EQUAL(guard_ring_putv(&p, kTestType + 1, parts, 2), 0);
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, GUARD_RING_TYPE_PENDING_FILE, nullptr, 0), 0);
  BOOST_TEST(guard_ring_put(&p, GUARD_RING_TYPE_PADDING, a, 5) == -EINVAL);
  BOOST_TEST(guard_ring_put(&p, 0, a, 5) == -EINVAL);

  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  std::vector<std::string> got;
  std::vector<uint32_t> types;
  c.Drain([&](const RingRecord& r) {
    got.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    types.push_back(r.type);
    BOOST_TEST(r.pid == ::getpid());
    BOOST_TEST(r.start_ticks == guard_ring_start_ticks(0));
    return true;
  });
  BOOST_TEST((got == std::vector<std::string>{"first", "second", ""}));
  BOOST_TEST((types == std::vector<uint32_t>{kTestType, kTestType + 1, GUARD_RING_TYPE_PENDING_FILE}));
  BOOST_TEST(c.Empty());
}

namespace {

struct FillFrom {
  std::string text;
  long result = 0;  // < 0: fail with it; else fill text (at most room)
  uint32_t room_seen = 0;
};

long FillText(void* arg, unsigned char* to, uint32_t room) {
  auto* f = static_cast<FillFrom*>(arg);
  f->room_seen = room;
  if (f->result < 0) {
    std::memset(to, 'x', room);  // what a failed read may leave: never delivered
    return f->result;
  }
  size_t n = std::min<size_t>(room, f->text.size());
  std::memcpy(to, f->text.data(), n);
  return static_cast<long>(n);
}

std::vector<std::string> DrainAll(RingConsumer* c) {
  std::vector<std::string> got;
  c->Drain([&](const RingRecord& r) {
    got.emplace_back(reinterpret_cast<const char*>(r.payload.data()), r.payload.size());
    return true;
  });
  return got;
}

}  // namespace

// A record whose tail the producer writes in place (the shim's inline
// pre-image): the payload is the parts and what the fill wrote, however
// much of its room; a fill that fails leaves nothing behind, not even the
// parts, and the records after it come out as usual.
BOOST_AUTO_TEST_CASE(FilledRecordsCarryWhatTheFillWroteAndAFailedFillNothing) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  guard_ring_part parts[] = {{"head:", 5}};
  FillFrom whole{"content", 0}, shorter{"abc", 0}, failed{"", -ESTALE}, too_long{"", 0};
  guard_ring_fill f{8, FillText, &whole};
  BOOST_REQUIRE_EQUAL(guard_ring_putv_fill_as(&p, ::getpid(), kTestType, parts, 1, &f), 0);
  BOOST_TEST(whole.room_seen == 8u);
  f.arg = &shorter;
  BOOST_REQUIRE_EQUAL(guard_ring_putv_fill_as(&p, ::getpid(), kTestType, parts, 1, &f), 0);
  f.arg = &failed;
  BOOST_TEST(guard_ring_putv_fill_as(&p, ::getpid(), kTestType, parts, 1, &f) == -ESTALE);
  // A fill that says it wrote more than its room is refused the same way.
  auto lie = [](void*, unsigned char*, uint32_t room) -> long { return static_cast<long>(room) + 1; };
  guard_ring_fill liar{4, lie, &too_long};
  BOOST_TEST(guard_ring_putv_fill_as(&p, ::getpid(), kTestType, parts, 1, &liar) == -EIO);
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "after", 5), 0);
  guard_ring_fill none{0, nullptr, nullptr};
  BOOST_TEST(guard_ring_putv_fill_as(&p, ::getpid(), kTestType, parts, 1, &none) == -EINVAL);

  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  BOOST_TEST((DrainAll(&c) == std::vector<std::string>{"head:content", "head:abc", "after"}));
  BOOST_TEST(c.counters().padding == 2u);
  BOOST_TEST(c.Empty());
}

// Every process of the session can write the ring. A record whose length
// no producer makes stops delivery there (the next record cannot be found),
// and the header says the consumer is gone, so that producers waiting for
// room give up (-EPIPE) instead of waiting for ever; a payload length longer
// than its record is the same. The supervisor reads nothing out of bounds.
BOOST_AUTO_TEST_CASE(ForgedFramingStopsDeliveryAndReadsNothingOutOfBounds) {
  for (int forgery = 0; forgery < 5; ++forgery) {
    TestRing ring(4096);
    guard_ring_producer p = ring.Producer();
    BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "good", 4), 0);
    BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "victim", 6), 0);
    BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "later", 5), 0);
    const uint64_t second = GUARD_RING_RECORD_SIZE(4);
    auto* rec = reinterpret_cast<guard_ring_record*>(ring.data() + second);
    switch (forgery) {
      case 0: rec->length = 12; break;                          // not whole 8-byte units
      case 1: rec->length = 8; break;                           // shorter than a header
      case 2: rec->length = 4096; break;                        // past the end of the data
      case 3: rec->length = static_cast<int32_t>(GUARD_RING_RECORD_SIZE(6) + 64); break;  // past the last claim
      case 4: rec->payload_length = 1u << 30; break;            // a payload longer than its record
    }
    RingConsumer c;
    BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
    BOOST_TEST((DrainAll(&c) == std::vector<std::string>{"good"}), "forgery " << forgery);
    BOOST_TEST(c.counters().corrupt_at == second + 1, "forgery " << forgery);
    BOOST_TEST(ring.header()->consumer == 0u);
    BOOST_TEST(DrainAll(&c).empty());  // and stays stopped
  }
}

// An unpublished claim whose owner is dead is freed up to the end its
// header names, which a process of the session can forge too: an end past
// the last claim (or the data) stops delivery instead of zeroing memory
// beyond the segment. And a consumer that gave up sleeps in Wait rather
// than return at once (its feed would spin on the record at the head).
BOOST_AUTO_TEST_CASE(ADeadOwnersForgedClaimEndIsNotFreedAndAGivenUpConsumerSleeps) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "good", 4), 0);
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "victim", 6), 0);
  const uint64_t second = GUARD_RING_RECORD_SIZE(4);
  auto* rec = reinterpret_cast<guard_ring_record*>(ring.data() + second);
  // Being filled, by a process that is not alive: our pid with a start
  // time no process of ours has.
  rec->start_ticks = 1;
  rec->pid = static_cast<uint32_t>(::getpid());
  rec->length = -0x7ffffff8;
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  BOOST_TEST((DrainAll(&c) == std::vector<std::string>{"good"}));  // stops at it once
  BOOST_TEST(DrainAll(&c).empty());                                // then judges its owner
  BOOST_TEST(c.counters().reclaimed == 0u);
  BOOST_TEST(c.counters().corrupt_at == second + 1);
  const auto start = std::chrono::steady_clock::now();
  c.Wait(40);
  const auto slept = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  BOOST_TEST(slept.count() >= 30);
}

// The feed's loop waits with a timeout; the session's end must not wait it
// out. A Wait of an hour that Interrupt does not end hangs this test until
// CTest's timeout (a failure, not a measured time). Every Wait after an
// Interrupt returns at once (the loop that checks its stop flag is never
// put back to sleep), until the consumer is attached again.
BOOST_AUTO_TEST_CASE(InterruptEndsTheWaitUnderWayAndEveryLaterOne) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  std::atomic<bool> entered{false}, returned{false};
  std::thread waiter([&] {
    entered.store(true);
    c.Wait(3600 * 1000);
    returned.store(true);
  });
  while (!entered.load()) std::this_thread::yield();
  // Whether the waiter is already asleep in the futex or not yet: either
  // way it must come back.
  c.Interrupt();
  waiter.join();
  BOOST_TEST(returned.load());
  c.Wait(3600 * 1000);  // after an Interrupt: at once
  // Records published meanwhile are still delivered: Interrupt only wakes.
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(guard_ring_put(&p, kTestType, "after", 5), 0);
  BOOST_TEST((DrainAll(&c) == std::vector<std::string>{"after"}));
}

BOOST_AUTO_TEST_CASE(HandlerThatRefusesLeavesTheRecordForNextTime) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  for (uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(Put(&p, 1, i, 16), 0);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Tally t;
  int calls = 0;
  BOOST_TEST(c.Drain([&](const RingRecord& r) { return ++calls == 2 ? false : t.Take(r); }) == 1u);
  BOOST_TEST(c.Drain(t.Handler()) == 2u);
  BOOST_TEST(t.records == 3u);
  BOOST_TEST(t.bad == 0u);
}

BOOST_AUTO_TEST_CASE(WrapAroundPadsTheEndAndLosesNothing) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Tally t;
  // Sizes that do not divide the capacity, so that records meet the end of
  // the data at every offset; a few records in flight at a time.
  uint32_t seq = 0;
  for (int round = 0; round < 400; ++round) {
    for (int k = 0; k < 3; ++k, ++seq)
      BOOST_REQUIRE_EQUAL(Put(&p, 7, seq, 8 + (seq * 37) % 900), 0);
    c.Drain(t.Handler());
  }
  BOOST_TEST(t.records == seq);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(c.counters().padding > 10u);
  BOOST_TEST(c.Empty());
  // Every consumed byte is zero again.
  const unsigned char* data = static_cast<unsigned char*>(ring.segment.base()) + GUARD_RING_HEADER_SIZE;
  size_t nonzero = 0;
  for (size_t i = 0; i < 4096; ++i) nonzero += data[i] != 0;
  BOOST_TEST(nonzero == 0u);
}

BOOST_AUTO_TEST_CASE(RecordAsLongAsTheRingPassesAndALongerOneIsRefused) {
  constexpr uint64_t kCap = 8192;
  TestRing ring(kCap);
  guard_ring_producer p = ring.Producer();
  const uint32_t max = static_cast<uint32_t>(GUARD_RING_MAX_PAYLOAD(kCap));
  std::vector<uint8_t> big(max + 1, 0xab);
  BOOST_TEST(guard_ring_put(&p, kTestType, big.data(), max + 1) == -EMSGSIZE);

  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Tally t;
  std::atomic<bool> done{false};
  // The consumer runs beside the producer: a record as long as the ring
  // must wait for everything before it, padding included, to be consumed.
  std::thread consumer([&] {
    while (!done.load()) {
      c.Drain(t.Handler());
      c.Wait(5);
    }
    c.Drain(t.Handler());
  });
  uint32_t seq = 0;
  const uint32_t sizes[] = {max, 100, max - 8, max / 2 + 1, max / 2 + 1, 24, max, max - 100, 3000};
  for (int round = 0; round < 20; ++round)
    for (uint32_t size : sizes) BOOST_REQUIRE_EQUAL(Put(&p, 3, seq++, size), 0);
  while (!c.Empty()) std::this_thread::yield();
  done = true;
  consumer.join();
  BOOST_TEST(t.records == seq);
  BOOST_TEST(t.bad == 0u);
}

// --- puts from signal handlers ---------------------------------------------

namespace {
guard_ring_producer* g_producer = nullptr;
int g_nested_rc = 1;
uint32_t g_nested_size = 16;
enum guard_ring_phase g_interrupt_at;
bool g_raised = false;

// The handler's put: no allocation (a static buffer), as in a real handler.
void NestedPut(int) {
  static uint8_t buf[4096];
  FillPayload(buf, 2, 0, g_nested_size);
  g_nested_rc = guard_ring_put(g_producer, kTestType, buf, g_nested_size);
}

// Interrupts the first put that reaches the phase (not the handler's own).
void RaiseAt(void*, enum guard_ring_phase phase) {
  if (phase == g_interrupt_at && !g_raised) {
    g_raised = true;
    ::raise(SIGUSR1);
  }
}
}  // namespace

BOOST_AUTO_TEST_CASE(PutFromASignalHandlerInterruptingAPutCompletes) {
  for (auto phase : {GUARD_RING_PHASE_SLOT_TAKEN, GUARD_RING_PHASE_CLAIMED, GUARD_RING_PHASE_BEGUN,
                     GUARD_RING_PHASE_FILLED}) {
    TestRing ring(4096);
    guard_ring_producer p = ring.Producer();
    g_producer = &p;
    g_nested_rc = 1;
    g_nested_size = 16;
    g_interrupt_at = phase;
    g_raised = false;
    struct sigaction sa {};
    sa.sa_handler = NestedPut;
    BOOST_REQUIRE(::sigaction(SIGUSR1, &sa, nullptr) == 0);
    p.test_hook = RaiseAt;
    BOOST_REQUIRE_EQUAL(Put(&p, 1, 0, 100), 0);
    p.test_hook = nullptr;
    BOOST_TEST(g_nested_rc == 0);

    RingConsumer c;
    BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
    std::vector<uint32_t> producers;
    c.Drain([&](const RingRecord& r) {
      Stamp s;
      BOOST_TEST(ReadPayload(r, &s));
      producers.push_back(s.producer);
      return true;
    });
    // The handler's record was claimed after the interrupted one (except
    // when it interrupted before the claim).
    if (phase == GUARD_RING_PHASE_SLOT_TAKEN)
      BOOST_TEST((producers == std::vector<uint32_t>{2, 1}));
    else
      BOOST_TEST((producers == std::vector<uint32_t>{1, 2}));
  }
  ::signal(SIGUSR1, SIG_DFL);
}

BOOST_AUTO_TEST_CASE(PutFromASignalHandlerThatOnlyTheInterruptedPutCouldMakeRoomForFails) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  g_producer = &p;
  g_nested_rc = 1;
  g_nested_size = 3000;  // needs more than what lies before the interrupted record
  g_interrupt_at = GUARD_RING_PHASE_BEGUN;
  g_raised = false;
  struct sigaction sa {};
  sa.sa_handler = NestedPut;
  BOOST_REQUIRE(::sigaction(SIGUSR1, &sa, nullptr) == 0);
  p.test_hook = RaiseAt;
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 0, 2000), 0);
  p.test_hook = nullptr;
  ::signal(SIGUSR1, SIG_DFL);
  // Waiting would never end: the consumer cannot pass the interrupted
  // record until the handler returns.
  BOOST_TEST(g_nested_rc == -EDEADLK);
  Tally t;
  BOOST_TEST(c.Drain(t.Handler()) == 1u);
  BOOST_TEST(t.bad == 0u);
}

BOOST_AUTO_TEST_CASE(PutFromASignalHandlerWaitsWhenTheConsumerCanMakeRoom) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  // 3000 bytes waiting to be consumed, then the interrupted 200-byte put;
  // the handler's 1500 bytes fit once the first record is consumed.
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 0, 3000), 0);
  Tally t;
  std::atomic<bool> go{false};
  std::thread consumer([&] {
    while (!go.load()) std::this_thread::yield();
    while (t.records < 3) {
      c.Drain(t.Handler());
      c.Wait(5);
    }
  });
  g_producer = &p;
  g_nested_rc = 1;
  g_nested_size = 1500;
  g_interrupt_at = GUARD_RING_PHASE_BEGUN;
  g_raised = false;
  struct sigaction sa {};
  sa.sa_handler = NestedPut;
  BOOST_REQUIRE(::sigaction(SIGUSR1, &sa, nullptr) == 0);
  p.test_hook = RaiseAt;
  go = true;
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 1, 200), 0);
  p.test_hook = nullptr;
  ::signal(SIGUSR1, SIG_DFL);
  consumer.join();
  BOOST_TEST(g_nested_rc == 0);
  BOOST_TEST(t.records == 3u);
  BOOST_TEST(t.bad == 0u);
}

// --- fork and vfork ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(VforkAndForkChildrenPutUnderTheirOwnPid) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 0, 16), 0);  // caches the parent's identity
  pid_t vchild = ::vfork();
  if (vchild == 0) ::_exit(Put(&p, 2, 0, 16) == 0 ? 0 : 1);
  BOOST_REQUIRE(vchild > 0);
  int st = 0;
  BOOST_REQUIRE(::waitpid(vchild, &st, 0) == vchild);
  BOOST_TEST(st == 0);
  pid_t fchild = Spawn([&] { return Put(&p, 3, 0, 16) == 0 ? 0 : 1; });
  BOOST_REQUIRE(::waitpid(fchild, &st, 0) == fchild);
  BOOST_TEST(st == 0);
  BOOST_REQUIRE_EQUAL(Put(&p, 1, 1, 16), 0);  // the vfork child rewrote the cache

  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  std::vector<std::pair<uint32_t, pid_t>> got;
  c.Drain([&](const RingRecord& r) {
    Stamp s;
    BOOST_TEST(ReadPayload(r, &s));
    got.emplace_back(s.producer, r.pid);
    return true;
  });
  std::vector<std::pair<uint32_t, pid_t>> want = {{1, ::getpid()}, {2, vchild}, {3, fchild}, {1, ::getpid()}};
  BOOST_TEST((got == want));
}

// --- the consumer -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(FullRingWithAConsumerThatDetachedFailsWithEpipeAndKeepsErrno) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  {
    RingConsumer c;
    BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  }  // detached
  int rc = 0;
  uint32_t seq = 0;
  for (; rc == 0; ++seq) {
    errno = 1234;
    rc = Put(&p, 1, seq, 500);
    BOOST_REQUIRE(errno == 1234);
  }
  BOOST_TEST(rc == -EPIPE);
  // What went in before is still there for the next consumer (recovery).
  RingConsumer next;
  BOOST_REQUIRE(next.Attach(ring.segment.base(), ring.segment.size()).ok());
  Tally t;
  BOOST_TEST(next.Drain(t.Handler()) == seq - 1);
  BOOST_TEST(t.bad == 0u);
}

BOOST_AUTO_TEST_CASE(FullRingWhoseConsumerDiedFailsWithEpipe) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  // A consumer in a child that attaches and dies without detaching.
  pid_t child = Spawn([&] {
    RingConsumer* c = new RingConsumer;  // never destroyed: no Detach
    return c->Attach(ring.segment.base(), ring.segment.size()).ok() ? 0 : 1;
  });
  int st = 0;
  BOOST_REQUIRE(::waitpid(child, &st, 0) == child);
  BOOST_REQUIRE(st == 0);
  BOOST_REQUIRE(ring.header()->consumer != 0u);
  int rc = 0;
  for (uint32_t seq = 0; rc == 0; ++seq) rc = Put(&p, 1, seq, 500);
  BOOST_TEST(rc == -EPIPE);
}

BOOST_AUTO_TEST_CASE(ConsumerThatDiedWhileFreeingIsFinishedByTheNext) {
  TestRing ring(4096);
  guard_ring_producer p = ring.Producer();
  for (uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(Put(&p, 1, i, 100), 0);
  // What a consumer that died halfway through freeing the first record
  // leaves: freeing_end set, the record's start zeroed, head not moved.
  const uint64_t first = GUARD_RING_RECORD_SIZE(100);
  guard_ring_header* h = ring.header();
  h->freeing_end = first;
  std::memset(static_cast<unsigned char*>(ring.segment.base()) + GUARD_RING_HEADER_SIZE, 0, 40);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Tally t;
  t.next[1] = 1;  // the first was consumed by the dead consumer
  BOOST_TEST(c.Drain(t.Handler()) == 2u);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(c.Empty());
}

BOOST_AUTO_TEST_CASE(ProducerInAnotherPidNamespaceIsRefused) {
  TestRing ring(4096);
  // As if the ring had been made in another pid namespace: this process's
  // pids would mean nothing to its consumer.
  ring.header()->pid_ns ^= 1;
  guard_ring_producer p = ring.Producer();
  BOOST_TEST(Put(&p, 1, 0, 16) == -EXDEV);
  ring.header()->pid_ns ^= 1;
  BOOST_TEST(Put(&p, 1, 0, 16) == 0);
}

// --- claims that stay unpublished (docs/ring.md, "Reading past a claim") ---

namespace {

// A claim of a record with `payload` bytes at the tail, made as the process
// `identity` would make it (its claim slot, the tail, its header) and left
// unpublished: what a stopped producer leaves, or a forger that names it.
// zero_header: the owner stopped before its first store (only its slot
// says whose the claim is). named: its slot is left saying so.
struct Claim {
  uint64_t pos = 0;
  uint32_t length = 0;
  uint32_t slot = 0;
};

Claim ClaimUnpublished(TestRing& ring, uint64_t identity, uint32_t payload, bool zero_header = false,
                       bool named = true) {
  guard_ring_header* h = ring.header();
  Claim c;
  c.length = static_cast<uint32_t>(GUARD_RING_RECORD_SIZE(payload));
  while (h->slots[c.slot].identity != 0) ++c.slot;
  const uint64_t tail = h->tail;
  c.pos = GUARD_RING_TAIL_POSITION(tail);
  BOOST_REQUIRE((c.pos & (ring.segment.size() - GUARD_RING_HEADER_SIZE - 1)) + c.length <=
                ring.segment.size() - GUARD_RING_HEADER_SIZE);
  const uint32_t prev = GUARD_RING_TAIL_SLOT(tail);
  if (named) {
    h->slots[c.slot].identity = identity;
    h->slots[c.slot].start = c.pos;
    h->slots[c.slot].claim = c.pos + c.length;
  }
  if (prev != GUARD_RING_NO_SLOT && h->slots[prev].claim == c.pos) h->slots[prev].claim |= GUARD_RING_CLAIM_WON;
  h->tail = GUARD_RING_TAIL(c.pos + c.length, named ? c.slot : GUARD_RING_NO_SLOT);
  if (!zero_header) {
    auto* rec = reinterpret_cast<guard_ring_record*>(ring.data() + c.pos);
    rec->type = kTestType;
    rec->payload_length = payload;
    rec->pid = GUARD_RING_IDENTITY_PID(identity);
    rec->start_ticks = GUARD_RING_IDENTITY_START(identity);
    __atomic_store_n(&rec->length, -static_cast<int32_t>(c.length), __ATOMIC_RELEASE);
  }
  return c;
}

// Publishes it as producer `id`'s record `seq`, and gives its slot back.
void Publish(TestRing& ring, const Claim& c, uint64_t identity, uint32_t id, uint32_t seq) {
  auto* rec = reinterpret_cast<guard_ring_record*>(ring.data() + c.pos);
  const uint32_t payload = c.length - GUARD_RING_RECORD_HEADER_SIZE;
  rec->type = kTestType;
  rec->payload_length = payload;
  rec->pid = GUARD_RING_IDENTITY_PID(identity);
  rec->start_ticks = GUARD_RING_IDENTITY_START(identity);
  FillPayload(reinterpret_cast<uint8_t*>(rec + 1), id, seq, payload);
  __atomic_store_n(&rec->length, static_cast<int32_t>(c.length), __ATOMIC_RELEASE);
  __atomic_store_n(&ring.header()->slots[c.slot].identity, 0, __ATOMIC_RELEASE);
}

// A child of this process that waits stopped until killed: a live owner of
// the session (its parent chain reaches this process).
struct StoppedChild {
  StoppedChild() {
    pid = Spawn([] {
      ::raise(SIGSTOP);
      return 0;
    });
    int st = 0;
    BOOST_REQUIRE(::waitpid(pid, &st, WUNTRACED) == pid);
    BOOST_REQUIRE(WIFSTOPPED(st));
    identity = GUARD_RING_IDENTITY(pid, guard_ring_start_ticks(pid));
    BOOST_REQUIRE(GUARD_RING_IDENTITY_START(identity) != 0u);
  }
  void Kill() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = 0;
  }
  ~StoppedChild() { Kill(); }
  pid_t pid = 0;
  uint64_t identity = 0;
};

// pid 1, with its real start time: alive, and of no session but its own.
uint64_t Pid1Identity() {
  const uint64_t start = guard_ring_start_ticks(1);
  BOOST_REQUIRE(start != 0u);
  return GUARD_RING_IDENTITY(1, start);
}

// Drains twice (the first stop at an unpublished claim only stops) with
// a tally.
size_t DrainTwice(RingConsumer* c, Tally* t) { return c->Drain(t->Handler()) + c->Drain(t->Handler()); }

}  // namespace

// A producer stopped mid-record (Ctrl-Z, a debugger) keeps its place, and
// holds back nobody else: the consumer reads past it, and delivers it once
// it is published; then the whole run is freed.
BOOST_AUTO_TEST_CASE(ALiveStoppedOwnersClaimIsReadPastAndDeliveredWhenPublished) {
  for (bool zero_header : {false, true}) {
    BOOST_TEST_CONTEXT("zero header " << zero_header) {
      TestRing ring(4096);
      RingConsumer c;
      BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
      c.SetSession(::getpid());
      StoppedChild owner;
      const Claim held = ClaimUnpublished(ring, owner.identity, 40, zero_header);
      guard_ring_producer p = ring.Producer();
      for (uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(Put(&p, 2, i, 64), 0);
      Tally t;
      BOOST_TEST(c.Drain(t.Handler()) == 0u);  // stops at it once
      BOOST_TEST(c.Blocked());
      BOOST_TEST(c.Drain(t.Handler()) == 3u);  // then reads past it
      BOOST_TEST(!c.Blocked());
      BOOST_TEST(c.HeldClaims() == 1u);
      BOOST_TEST(c.counters().read_past == 1u);
      BOOST_TEST(c.ConsumedPosition() == held.pos, "its space stays claimed");
      for (int i = 0; i < 5; ++i) BOOST_TEST(c.Drain(t.Handler()) == 0u);  // nothing twice
      Publish(ring, held, owner.identity, 1, 0);
      BOOST_TEST(c.Drain(t.Handler()) == 1u);
      BOOST_TEST(t.records == 4u);
      BOOST_TEST(t.bad == 0u);
      BOOST_TEST(c.HeldClaims() == 0u);
      BOOST_TEST(c.Empty());
      BOOST_TEST(c.counters().reclaimed == 0u);
      BOOST_TEST(c.counters().foreign_claims == 0u);
      // The freed run reads as zero, ready for the next lap.
      for (uint32_t i = 0; i < 200; ++i) {
        BOOST_REQUIRE_EQUAL(Put(&p, 2, 3 + i, 64), 0);
        c.Drain(t.Handler());
      }
      BOOST_TEST(t.bad == 0u);
      BOOST_TEST(t.records == 204u);
    }
  }
}

// A held claim's owner publishes it and puts its next record while the
// consumer is reading past it (here: while the handler holds a record
// claimed after it). The scan then finds the owner's next record published
// before the held one was looked at again: the held one must come out
// first, or the owner's records come out out of order (a shim's OUTCOME
// before its CALL). ring_processes_test
// ProducersKilledAtRandomPointsNeverWedgeTheRingNorLoseAPublishedRecord met
// this at random; here the handler is the pause point.
BOOST_AUTO_TEST_CASE(AProducersRecordPublishedAfterItsHeldClaimComesOutAfterIt) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  c.SetSession(::getpid());
  StoppedChild owner;
  const Claim held = ClaimUnpublished(ring, owner.identity, 40);
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(Put(&p, 2, 0, 64), 0);
  Tally t;
  std::vector<uint32_t> order;  // producer ids, as delivered
  bool resumed = false;
  auto handler = [&](const RingRecord& r) {
    Stamp s{};
    if (r.payload.size() >= sizeof s) std::memcpy(&s, r.payload.data(), sizeof s);
    order.push_back(s.producer);
    if (s.producer == 2 && !resumed) {
      // The owner goes on: publishes the held claim, then its next record.
      resumed = true;
      Publish(ring, held, owner.identity, 1, 0);
      const Claim next = ClaimUnpublished(ring, owner.identity, 40);
      Publish(ring, next, owner.identity, 1, 1);
    }
    return t.Take(r);
  };
  BOOST_TEST(c.Drain(handler) == 0u);  // stops at the claim once
  BOOST_TEST(c.Drain(handler) == 3u);  // reads past it: 2's record, then 1's two
  BOOST_TEST(resumed);
  BOOST_TEST(t.bad == 0u, "producer 1's records in its put order");
  BOOST_TEST(t.next[1] == 2u);
  BOOST_TEST((order == std::vector<uint32_t>{2, 1, 1}));
  BOOST_TEST(c.HeldClaims() == 0u);
  BOOST_TEST(c.Empty(), "the run behind the held claim is freed");
  // The freed run reads as zero for the next lap.
  for (uint32_t i = 1; i < 200; ++i) {
    BOOST_REQUIRE_EQUAL(Put(&p, 2, i, 64), 0);
    c.Drain(t.Handler());
  }
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(t.records == 202u);
}

// The owner of a claim read past dies: its space is freed (reclaimed), and
// with it the records delivered after it.
BOOST_AUTO_TEST_CASE(AClaimReadPastIsFreedWhenItsOwnerDies) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  c.SetSession(::getpid());
  StoppedChild owner;
  ClaimUnpublished(ring, owner.identity, 40);
  guard_ring_producer p = ring.Producer();
  for (uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(Put(&p, 2, i, 64), 0);
  Tally t;
  BOOST_TEST(DrainTwice(&c, &t) == 3u);
  BOOST_TEST(!c.Empty());
  owner.Kill();
  BOOST_TEST(c.Drain(t.Handler()) == 0u);
  BOOST_TEST(c.counters().reclaimed == 1u);
  BOOST_TEST(c.Empty());
  BOOST_TEST(t.records == 3u);
  BOOST_TEST(t.bad == 0u);
}

// A claim that names pid 1 (alive, not of the session), or that no claim
// slot names, is forged: freed at the second look, never delivered, even
// once "published", and counted.
BOOST_AUTO_TEST_CASE(AClaimOfAProcessNotOfTheSessionIsFreedAndNeverDelivered) {
  for (bool named : {true, false}) {
    BOOST_TEST_CONTEXT("named by a slot " << named) {
      TestRing ring(4096);
      RingConsumer c;
      BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
      c.SetSession(::getpid());
      // Unnamed, it names a live process of the session: still forged.
      const uint64_t owner = named ? Pid1Identity() : GUARD_RING_IDENTITY(::getpid(), guard_ring_start_ticks(0));
      const Claim forged = ClaimUnpublished(ring, owner, 40, false, named);
      guard_ring_producer p = ring.Producer();
      for (uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE_EQUAL(Put(&p, 2, i, 64), 0);
      Tally t;
      BOOST_TEST(DrainTwice(&c, &t) == 3u);
      BOOST_TEST(c.counters().foreign_claims >= 1u);  // the claim (and its slot, once freed)
      BOOST_TEST(c.HeldClaims() == 0u);
      BOOST_TEST(c.Empty());
      // Its forger "publishes" it late, in space that is free again.
      Publish(ring, forged, owner, 1, 0);
      BOOST_TEST(c.Drain(t.Handler()) == 0u);
      BOOST_TEST(t.records == 3u);
      BOOST_TEST(t.bad == 0u);
    }
  }
}

// Without a session to check against (recovery), an alive owner's claim is
// read past as any live one.
BOOST_AUTO_TEST_CASE(WithoutASessionAnAliveOwnerIsHeldNotForeign) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  ClaimUnpublished(ring, Pid1Identity(), 40);
  guard_ring_producer p = ring.Producer();
  BOOST_REQUIRE_EQUAL(Put(&p, 2, 0, 64), 0);
  Tally t;
  BOOST_TEST(DrainTwice(&c, &t) == 1u);
  BOOST_TEST(c.HeldClaims() == 1u);
  BOOST_TEST(c.counters().foreign_claims == 0u);
}

// Every claim slot taken by pid 1's identity: the consumer frees them (no
// process of the session holds them), and the put that waited goes on.
BOOST_AUTO_TEST_CASE(ClaimSlotsTakenByAProcessNotOfTheSessionAreFreed) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  c.SetSession(::getpid());
  const uint64_t pid1 = Pid1Identity();
  for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) ring.header()->slots[i].identity = pid1;
  guard_ring_producer p = ring.Producer();
  p.wait_limit_ns = INT64_C(60) * 1000 * 1000 * 1000;  // a release ends the wait, never the bound
  std::atomic<int> rc{1};
  std::thread producer([&] { rc = Put(&p, 2, 0, 64); });
  Tally t;
  HangGuard hang(60);
  while (rc == 1 && !hang.Expired()) {
    c.Drain(t.Handler());
    c.Wait(2);
  }
  producer.join();
  BOOST_TEST(rc == 0);
  c.Drain(t.Handler());
  BOOST_TEST(t.records == 1u);
  // Those freed before the put took one; the rest when slots next run out.
  BOOST_TEST(c.counters().foreign_claims >= 1u);
}

// A put finds no free claim slot (all held by live puts of the session, here
// this process's identity): it gives up within its bound, -ETIMEDOUT, and
// writes nothing.
BOOST_AUTO_TEST_CASE(APutThatFindsNoFreeSlotGivesUpWithinItsBound) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  c.SetSession(::getpid());
  const uint64_t me = GUARD_RING_IDENTITY(::getpid(), guard_ring_start_ticks(0));
  for (uint32_t i = 0; i < GUARD_RING_SLOTS; ++i) ring.header()->slots[i].identity = me;
  guard_ring_producer p = ring.Producer();
  p.wait_limit_ns = 20 * 1000 * 1000;
  std::atomic<int> rc{1};
  std::thread producer([&] { rc = Put(&p, 2, 0, 64); });
  HangGuard hang(60);
  while (rc == 1 && !hang.Expired()) {
    c.Drain([](const RingRecord&) { return true; });
    c.Wait(2);
  }
  producer.join();
  BOOST_TEST(rc == -ETIMEDOUT);
  BOOST_TEST(c.Empty());
}

// A claim held at the head (its owner stopped) and a ring full behind it:
// a put waits for room within its bound, gives up with -ETIMEDOUT, and the
// next put of the process gives up at once while the head has not moved
// (it would only wait the bound again). Once the head moves, puts go on.
BOOST_AUTO_TEST_CASE(APutWaitingForRoomGivesUpWithinItsBoundAndAtOnceWhileTheHeadStays) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  c.SetSession(::getpid());
  StoppedChild owner;
  const Claim held = ClaimUnpublished(ring, owner.identity, 40);
  guard_ring_producer p = ring.Producer();
  p.wait_limit_ns = 20 * 1000 * 1000;
  Tally t;
  int rc = 0;
  uint32_t seq = 0;
  for (; rc == 0; ++seq) {
    rc = Put(&p, 2, seq, 200);
    c.Drain(t.Handler());
  }
  --seq;  // the one that failed
  BOOST_TEST(rc == -ETIMEDOUT);
  BOOST_TEST(t.records == seq, "everything behind the held claim was delivered");
  BOOST_TEST(p.gave_up_at == held.pos + 1);
  // Without waiting the bound: a bound of an hour would hang here.
  p.wait_limit_ns = INT64_C(3600) * 1000 * 1000 * 1000;
  BOOST_TEST(Put(&p, 2, seq, 200) == -ETIMEDOUT);
  Publish(ring, held, owner.identity, 1, 0);
  c.Drain(t.Handler());
  BOOST_TEST(Put(&p, 2, seq, 200) == 0);
  c.Drain(t.Handler());
  BOOST_TEST(t.records == seq + 2);
  BOOST_TEST(t.bad == 0u);
}
