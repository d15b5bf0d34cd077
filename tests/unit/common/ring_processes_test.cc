// The ring between processes: many producers, a full ring, producers stopped
// or killed in the middle of a record.
#define BOOST_TEST_MODULE ring_processes
#include <boost/test/unit_test.hpp>

#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <random>
#include <thread>

#include "ring_test_util.h"

using guard::RingConsumer;
using guard::RingRecord;
using namespace ring_test;

namespace {

// Puts count records of varying sizes (some far larger than most) as
// producer `id`; 0 on success, else the failing put's errno.
int PutSeries(guard_ring_producer p, uint32_t id, uint32_t count, uint32_t max_size) {
  for (uint32_t seq = 0; seq < count; ++seq) {
    size_t size = 8 + (seq * 2654435761u + id * 97) % max_size;
    int rc = Put(&p, id, seq, size);
    if (rc != 0) return -rc;
  }
  return 0;
}

void CheckManyProducers(int producers, uint32_t per_producer, uint64_t capacity) {
  TestRing ring(capacity);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  guard_ring_producer p = ring.Producer();
  std::vector<pid_t> kids;
  for (int i = 0; i < producers; ++i)
    kids.push_back(Spawn([&, i] { return PutSeries(p, static_cast<uint32_t>(i), per_producer, 600); }));
  Tally t;
  std::vector<int> statuses;
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), kids, &statuses));
  for (int st : statuses) BOOST_TEST(st == 0);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(t.records == static_cast<uint64_t>(producers) * per_producer);
  for (int i = 0; i < producers; ++i) BOOST_TEST(t.next[static_cast<uint32_t>(i)] == per_producer);
  BOOST_TEST(c.counters().reclaimed == 0u);
}

// Shared with children: where a producer is, for the parent to wait on.
struct Shared {
  std::atomic<uint32_t> published;  // records a producer's puts have returned
  std::atomic<uint32_t> reached;    // set by the hook
};

Shared* MapShared() {
  void* m = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  BOOST_REQUIRE(m != MAP_FAILED);
  return new (m) Shared{};
}

struct HookArg {
  enum guard_ring_phase phase;
  int signal;
  Shared* shared;
  bool armed;
};

// In the child: at the armed phase, say so and send itself the signal.
void SignalAt(void* arg, enum guard_ring_phase phase) {
  auto* h = static_cast<HookArg*>(arg);
  if (!h->armed || phase != h->phase) return;
  h->armed = false;
  h->shared->reached.store(1);
  ::kill(::getpid(), h->signal);
}

// A child that puts `before` records, then one more that stops at phase
// with the signal.
pid_t SpawnInterrupted(TestRing& ring, Shared* shared, enum guard_ring_phase phase, int sig,
                       uint32_t id, uint32_t before) {
  return Spawn([&ring, shared, phase, sig, id, before] {
    guard_ring_producer p = ring.Producer();
    for (uint32_t seq = 0; seq < before; ++seq)
      if (Put(&p, id, seq, 64) != 0) return 1;
    HookArg arg{phase, sig, shared, true};
    p.test_hook = SignalAt;
    p.test_hook_arg = &arg;
    return Put(&p, id, before, 64) == 0 ? 0 : 2;
  });
}

void WaitStopped(pid_t pid) {
  int st = 0;
  BOOST_REQUIRE(::waitpid(pid, &st, WUNTRACED) == pid);
  BOOST_REQUIRE(WIFSTOPPED(st));
}

}  // namespace

// The shared-memory pages this process has mapped, in KiB (RssShmem).
long ResidentShmemKiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RssShmem:", 0) == 0) return std::stol(line.substr(9));
  }
  return -1;
}

// Puts 2 MiB of records into a 4 MiB ring in a child, with the shim's
// give-back or none, and says how much of the ring stays resident in it.
long ResidentAfterPuts(TestRing* ring, uint64_t give_back) {
  guard_ring_producer p = ring->Producer();
  p.give_back_bytes = give_back;
  Shared* shared = MapShared();
  pid_t kid = Spawn([&] {
    const long before = ResidentShmemKiB();
    if (before < 0 || PutSeries(p, 1, 4096, 1000) != 0) return 2;
    shared->published.store(static_cast<uint32_t>(std::max(0L, ResidentShmemKiB() - before)));
    return 0;
  });
  int status = 0;
  BOOST_REQUIRE(::waitpid(kid, &status, 0) == kid);
  BOOST_REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  long kib = static_cast<long>(shared->published.load());
  ::munmap(shared, sizeof(Shared));
  // Every record arrives whole, given back or not.
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring->segment.base(), ring->segment.size()).ok());
  Tally t;
  while (c.Drain(t.Handler(), 1u << 20) != 0) {
  }
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(t.records == 4096u);
  c.Detach();
  return kib;
}

// docs/ring.md, "Pages a producer gives back": without it the 2 MiB a
// producer wrote stay in its resident set; with it about give_back_bytes.
BOOST_AUTO_TEST_CASE(APutGivesBackThePagesItWroteBehindIt) {
  TestRing kept(4u << 20);
  TestRing given(4u << 20);
  long without = ResidentAfterPuts(&kept, 0);
  long with = ResidentAfterPuts(&given, GUARD_RING_GIVE_BACK_BYTES);
  BOOST_TEST(without >= 2000, without << " KiB resident without give-back");
  BOOST_TEST(with <= 2 * static_cast<long>(GUARD_RING_GIVE_BACK_BYTES / 1024), with << " KiB resident with it");
}

BOOST_AUTO_TEST_CASE(OneProducerDeliversEveryRecordOnceInOrder) { CheckManyProducers(1, 3000, 16384); }
BOOST_AUTO_TEST_CASE(TwoProducersDeliverEveryRecordOnceInOrder) { CheckManyProducers(2, 3000, 16384); }
BOOST_AUTO_TEST_CASE(EightProducersDeliverEveryRecordOnceInOrder) { CheckManyProducers(8, 1500, 16384); }

BOOST_AUTO_TEST_CASE(ProducersOfAFullRingWaitUntilTheConsumerDrains) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  guard_ring_producer p = ring.Producer();
  std::vector<pid_t> kids;
  for (uint32_t i = 0; i < 3; ++i) kids.push_back(Spawn([&, i] { return PutSeries(p, i, 200, 300); }));
  // Nobody drains until every producer is asleep on the full ring.
  HangGuard guard(120);
  while (__atomic_load_n(&ring.header()->space_waiters, __ATOMIC_SEQ_CST) < 3 && !guard.Expired())
    ::usleep(1000);
  BOOST_REQUIRE(!guard.Expired());
  Tally t;
  std::vector<int> statuses;
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), kids, &statuses));
  for (int st : statuses) BOOST_TEST(st == 0);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(t.records == 600u);
}

BOOST_AUTO_TEST_CASE(LargeRecordsNearTheCapacityFromTwoProducers) {
  constexpr uint64_t kCap = 8192;
  TestRing ring(kCap);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  guard_ring_producer p = ring.Producer();
  const uint32_t max = static_cast<uint32_t>(GUARD_RING_MAX_PAYLOAD(kCap));
  std::vector<pid_t> kids;
  for (uint32_t i = 0; i < 2; ++i)
    kids.push_back(Spawn([&, i] {
      const uint32_t sizes[] = {max, max - 8, max / 2 + 1, 100, max - 1000, max / 3};
      for (uint32_t seq = 0; seq < 120; ++seq)
        if (Put(&p, i, seq, sizes[(seq + i) % 6]) != 0) return 1;
      return 0;
    }));
  Tally t;
  std::vector<int> statuses;
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), kids, &statuses));
  for (int st : statuses) BOOST_TEST(st == 0);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(t.records == 240u);
}

BOOST_AUTO_TEST_CASE(StoppedProducerMidRecordIsHeldNotReclaimedAndHoldsBackNobody) {
  for (auto phase : {GUARD_RING_PHASE_CLAIMED, GUARD_RING_PHASE_BEGUN, GUARD_RING_PHASE_FILLED}) {
    TestRing ring(4096);
    RingConsumer c;
    BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
    Shared* shared = MapShared();
    pid_t stopped = SpawnInterrupted(ring, shared, phase, SIGSTOP, 1, 3);
    WaitStopped(stopped);
    // Another producer's records land behind the stopped one's.
    guard_ring_producer p = ring.Producer();
    pid_t other = Spawn([&] { return PutSeries(p, 2, 20, 40); });
    int st = 0;
    BOOST_REQUIRE(::waitpid(other, &st, 0) == other);
    BOOST_REQUIRE(st == 0);

    Tally t;
    // However often the consumer looks, the stopped owner is alive: its
    // claim is held, never freed, and the other producer's records behind
    // it are read past it.
    for (int i = 0; i < 20; ++i) {
      c.Drain(t.Handler());
      c.Wait(2);
    }
    BOOST_TEST(t.records == 23u);
    BOOST_TEST(c.HeldClaims() == 1u);
    BOOST_TEST(!c.Empty());
    BOOST_TEST(c.counters().reclaimed == 0u);

    BOOST_REQUIRE(::kill(stopped, SIGCONT) == 0);
    std::vector<int> statuses;
    BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), {stopped}, &statuses));
    BOOST_TEST(statuses.at(0) == 0);
    BOOST_TEST(t.records == 24u);
    BOOST_TEST(t.next[1] == 4u);
    BOOST_TEST(t.next[2] == 20u);
    BOOST_TEST(t.bad == 0u);
    BOOST_TEST(c.counters().reclaimed == 0u);
    ::munmap(shared, sizeof(Shared));
  }
}

// A producer stopped inside its slot's seqlock (seq odd) has claimed
// nothing yet: the consumer neither waits on it (it used to spin on the
// slot for good) nor frees its slot, and others' records pass.
BOOST_AUTO_TEST_CASE(StoppedProducerInsideItsSlotsSeqlockHoldsNothingBack) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Shared* shared = MapShared();
  pid_t stopped = SpawnInterrupted(ring, shared, GUARD_RING_PHASE_INTENDING, SIGSTOP, 1, 3);
  WaitStopped(stopped);
  guard_ring_producer p = ring.Producer();
  pid_t other = Spawn([&] { return PutSeries(p, 2, 20, 40); });
  int st = 0;
  BOOST_REQUIRE(::waitpid(other, &st, 0) == other);
  BOOST_REQUIRE(st == 0);
  Tally t;
  for (int i = 0; i < 20; ++i) {
    c.Drain(t.Handler());
    c.Wait(2);
  }
  BOOST_TEST(t.records == 23u);
  BOOST_TEST(c.counters().freed_slots == 0u);
  BOOST_REQUIRE(::kill(stopped, SIGCONT) == 0);
  std::vector<int> statuses;
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), {stopped}, &statuses));
  BOOST_TEST(statuses.at(0) == 0);
  BOOST_TEST(t.records == 24u);
  BOOST_TEST(t.bad == 0u);
  ::munmap(shared, sizeof(Shared));
}

// One producer killed inside its slot's seqlock, another after its claim:
// reclaiming the second makes the consumer look at every slot, the first's
// torn one included, which it used to spin on for good (a hang seen in
// ProducersKilledAtRandomPointsNeverWedgeTheRingNorLoseAPublishedRecord).
// Now it frees that slot too, and the ring goes on.
BOOST_AUTO_TEST_CASE(ProducerKilledInsideItsSeqlockBesideAReclaimedOneIsFreed) {
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Shared* shared = MapShared();
  for (auto phase : {GUARD_RING_PHASE_INTENDING, GUARD_RING_PHASE_CLAIMED}) {
    pid_t killed = SpawnInterrupted(ring, shared, phase, SIGKILL, phase == GUARD_RING_PHASE_CLAIMED ? 3 : 1, 0);
    int st = 0;
    BOOST_REQUIRE(::waitpid(killed, &st, 0) == killed);
    BOOST_REQUIRE(WIFSIGNALED(st));
  }
  guard_ring_producer p = ring.Producer();
  pid_t other = Spawn([&] { return PutSeries(p, 2, 300, 100); });
  Tally t;
  std::vector<int> statuses;
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), {other}, &statuses, 60));
  BOOST_TEST(statuses.at(0) == 0);
  BOOST_TEST(t.next[2] == 300u);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(c.counters().reclaimed == 1u);
  BOOST_TEST(c.counters().freed_slots >= 2u);
  ::munmap(shared, sizeof(Shared));
}

BOOST_AUTO_TEST_CASE(ProducerKilledAtEachPointOfAPutLeavesTheRingWorking) {
  for (auto phase : {GUARD_RING_PHASE_SLOT_TAKEN, GUARD_RING_PHASE_INTENDING, GUARD_RING_PHASE_CLAIMED,
                     GUARD_RING_PHASE_BEGUN, GUARD_RING_PHASE_FILLED}) {
    BOOST_TEST_CONTEXT("phase " << phase) {
      TestRing ring(4096);
      RingConsumer c;
      BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
      Shared* shared = MapShared();
      pid_t killed = SpawnInterrupted(ring, shared, phase, SIGKILL, 1, 5);
      int st = 0;
      BOOST_REQUIRE(::waitpid(killed, &st, 0) == killed);
      BOOST_REQUIRE(WIFSIGNALED(st));
      // More than the ring holds comes after it: it all passes once the
      // dead claim is freed.
      guard_ring_producer p = ring.Producer();
      pid_t other = Spawn([&] { return PutSeries(p, 2, 300, 100); });
      Tally t;
      std::vector<int> statuses;
      BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), {other}, &statuses));
      BOOST_TEST(statuses.at(0) == 0);
      BOOST_TEST(t.next[1] == 5u);
      BOOST_TEST(t.next[2] == 300u);
      BOOST_TEST(t.bad == 0u);
      // Killed before its claim (its slot only): nothing to reclaim.
      const bool claimed = phase != GUARD_RING_PHASE_SLOT_TAKEN && phase != GUARD_RING_PHASE_INTENDING;
      BOOST_TEST(c.counters().reclaimed == (claimed ? 1u : 0u));
      ::munmap(shared, sizeof(Shared));
    }
  }
}

BOOST_AUTO_TEST_CASE(ProducerKilledWhileStoppedBeforeItsFirstStoreIsReclaimedBehindLaterClaims) {
  // The dead claim is not the last one: only its slot's WON mark, set by
  // the claims after it, says whose it was.
  TestRing ring(4096);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  Shared* shared = MapShared();
  pid_t victim = SpawnInterrupted(ring, shared, GUARD_RING_PHASE_CLAIMED, SIGSTOP, 1, 2);
  WaitStopped(victim);
  guard_ring_producer p = ring.Producer();
  pid_t other = Spawn([&] { return PutSeries(p, 2, 10, 40); });
  int st = 0;
  BOOST_REQUIRE(::waitpid(other, &st, 0) == other);
  BOOST_REQUIRE(st == 0);
  Tally t;
  for (int i = 0; i < 5; ++i) c.Drain(t.Handler());
  BOOST_TEST(t.records == 12u, "read past the stopped claim");
  BOOST_TEST(c.HeldClaims() == 1u);
  BOOST_REQUIRE(::kill(victim, SIGKILL) == 0);
  BOOST_REQUIRE(::waitpid(victim, &st, 0) == victim);
  BOOST_REQUIRE(DrainUntilDone(&c, t.Handler(), {}));
  BOOST_TEST(t.records == 12u);
  BOOST_TEST(t.next[2] == 10u);
  BOOST_TEST(t.bad == 0u);
  BOOST_TEST(c.counters().reclaimed == 1u);
  ::munmap(shared, sizeof(Shared));
}

namespace {
// In the random-kill children: a random pause at a random point of some
// puts, so that much of a producer's time is spent inside a record and the
// kills land at every point of it.
void Dawdle(void* arg, enum guard_ring_phase phase) {
  auto* state = static_cast<uint64_t*>(arg);
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t r = *state >> 33;
  if (static_cast<int>(r % 4) + 1 != static_cast<int>(phase)) return;
  for (uint64_t spin = (r >> 2) % 20000; spin > 0; --spin) __asm__ volatile("" ::: "memory");
}
}  // namespace

// Tally's `bad` counts order too: a producer's record delivered before
// its own earlier one, read past while the producer dawdled in it, is bad
// (ring_test AProducersRecordPublishedAfterItsHeldClaimComesOutAfterIt is
// that case alone, made to happen).
BOOST_AUTO_TEST_CASE(ProducersKilledAtRandomPointsNeverWedgeTheRingNorLoseAPublishedRecord) {
  constexpr int kRounds = 300;
  TestRing ring(65536);
  RingConsumer c;
  BOOST_REQUIRE(c.Attach(ring.segment.base(), ring.segment.size()).ok());
  guard_ring_producer p = ring.Producer();
  std::mt19937 rng(20261201);
  Shared* shared = static_cast<Shared*>(
      ::mmap(nullptr, 2 * sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  BOOST_REQUIRE(shared != MAP_FAILED);
  uint64_t reclaimed_before = 0;
  uint64_t rounds_with_reclaim = 0;
  for (int round = 0; round < kRounds; ++round) {
    // Two producers in a tight loop, ids unique to the round; each counts
    // the puts that returned.
    std::vector<pid_t> kids;
    for (uint32_t k = 0; k < 2; ++k) {
      new (&shared[k]) Shared{};
      uint32_t id = static_cast<uint32_t>(round * 2) + k;
      uint64_t seed = rng();
      kids.push_back(Spawn([&, id, k, seed] {
        uint64_t state = seed;
        guard_ring_producer mine = p;
        mine.test_hook = Dawdle;
        mine.test_hook_arg = &state;
        for (uint32_t seq = 0;; ++seq) {
          if (Put(&mine, id, seq, 8 + (seq * 131) % 3000) != 0) return 1;
          shared[k].published.store(seq + 1);
        }
      }));
    }
    // A killer beside the draining loop: both are killed after random
    // delays while the consumer keeps the ring moving.
    std::atomic<bool> killed{false};
    useconds_t first = rng() % 3000, second = rng() % 500;
    std::thread killer([&] {
      ::usleep(first);
      ::kill(kids[0], SIGKILL);
      ::usleep(second);
      ::kill(kids[1], SIGKILL);
      killed = true;
    });
    Tally t;
    while (!killed.load()) {
      c.Drain(t.Handler());
      c.Wait(1);
    }
    killer.join();
    for (pid_t kid : kids) ::waitpid(kid, nullptr, 0);
    BOOST_REQUIRE_MESSAGE(DrainUntilDone(&c, t.Handler(), {}), "ring wedged in round " << round);
    BOOST_REQUIRE_EQUAL(t.bad, 0u);
    for (uint32_t k = 0; k < 2; ++k) {
      uint32_t id = static_cast<uint32_t>(round * 2) + k;
      // Every put that returned was delivered (and perhaps one more that
      // was published before its producer could count it).
      uint32_t published = shared[k].published.load();
      BOOST_REQUIRE_GE(t.next[id], published);
      BOOST_REQUIRE_LE(t.next[id], published + 1);
    }
    if (c.counters().reclaimed > reclaimed_before) ++rounds_with_reclaim;
    reclaimed_before = c.counters().reclaimed;
  }
  BOOST_TEST_MESSAGE("rounds that freed a dead claim: " << rounds_with_reclaim << " of " << kRounds
                                                        << "; slots freed " << c.counters().freed_slots);
  // Not a timing assertion: the children spend most of their time inside
  // a record, so of 600 kills many land there (the phase test above covers
  // each point deterministically).
  BOOST_TEST(rounds_with_reclaim > 0u);
  ::munmap(shared, 2 * sizeof(Shared));
}
