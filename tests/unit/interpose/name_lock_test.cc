// The shim's name locks (interpose/linux/name_lock.h) on words of this
// process: what a take says of the look made before it, a lock whose owner
// died taken over, a wait for a live owner's release, a wait given up, a
// thread inside its own lock. No timed assertion: a wait either ends by a
// release, or by the bound the test passes.
#define BOOST_TEST_MODULE name_lock
#include <boost/test/unit_test.hpp>

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

extern "C" {
#include "common/ring_format.h"
#include "interpose/linux/capture_config.h"
#include "interpose/linux/name_lock.h"

// What name_lock.c needs of the rest of the shim.
struct shim_config shim_config;
long shim_own_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long r = syscall(nr, a1, a2, a3, a4, a5, a6);
  return r < 0 ? -errno : r;
}
}

namespace {

constexpr int64_t kForever = INT64_C(60) * 1000 * 1000 * 1000;  // never reached: a release ends the wait

int32_t MyTid() { return static_cast<int32_t>(syscall(SYS_gettid)); }
uint32_t Owner(uint32_t w) { return w & GUARD_RING_LOCK_TID_MASK; }

BOOST_AUTO_TEST_CASE(AFreeLockIsTakenAndTheLookBeforeItHolds) {
  uint32_t word = 0;
  uint32_t seen = word;
  BOOST_TEST(shim_name_lock_take_word(&word, seen, MyTid(), kForever) == 1);
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(MyTid()));
  shim_name_lock_give_word(&word, MyTid());
  BOOST_TEST(Owner(word) == 0u);
  BOOST_TEST(word != seen, "a release starts another generation");
}

BOOST_AUTO_TEST_CASE(AReleaseSinceTheLookSaysLookAgain) {
  uint32_t word = 0;
  uint32_t seen = word;
  int took = -2;
  // Another thread takes and gives it between our look and our take.
  std::thread([&] {
    int32_t tid = MyTid();
    took = shim_name_lock_take_word(&word, word, tid, kForever);
    shim_name_lock_give_word(&word, tid);
  }).join();
  BOOST_REQUIRE(took == 1);
  BOOST_TEST(shim_name_lock_take_word(&word, seen, MyTid(), kForever) == 0);
  shim_name_lock_give_word(&word, MyTid());
}

BOOST_AUTO_TEST_CASE(ALockHeldAtTheLookSaysLookAgain) {
  std::atomic<int32_t> other{0};
  uint32_t word = 0;
  std::atomic<bool> give{false};
  std::thread t([&] {
    other = MyTid();
    if (shim_name_lock_take_word(&word, 0, other, kForever) != 1) return;
    while (!give) std::this_thread::yield();
    shim_name_lock_give_word(&word, other);
  });
  while (Owner(__atomic_load_n(&word, __ATOMIC_ACQUIRE)) == 0) std::this_thread::yield();
  uint32_t seen = __atomic_load_n(&word, __ATOMIC_ACQUIRE);
  // Released only once we wait: the take returns when it is ours.
  std::thread releaser([&] { give = true; });
  BOOST_TEST(shim_name_lock_take_word(&word, seen, MyTid(), kForever) == 0);
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(MyTid()));
  shim_name_lock_give_word(&word, MyTid());
  releaser.join();
  t.join();
}

BOOST_AUTO_TEST_CASE(ALockWhoseOwnerDiedIsTakenOver) {
  int32_t dead = 0;
  std::thread([&] { dead = MyTid(); }).join();  // a thread id that no longer runs
  uint32_t word = static_cast<uint32_t>(dead);
  uint32_t seen = word;
  BOOST_TEST(shim_name_lock_take_word(&word, seen, MyTid(), kForever) == 0, "taken over: what it did is unknown");
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(MyTid()));
  shim_name_lock_give_word(&word, MyTid());
  // Its late release, were it to come, is not ours to honour: nothing happens.
  uint32_t before = word;
  shim_name_lock_give_word(&word, dead);
  BOOST_TEST(word == before);
}

// A word that names a thread not of the session (tid 1: alive, so tkill
// says EPERM or 0, never ESRCH; a forger wrote it) holds nothing: taken over
// at once, never waited for. With no session to check against, the same
// word is honoured (the bound ends the wait).
BOOST_AUTO_TEST_CASE(ALockWhoseOwnerIsNotOfTheSessionIsTakenOver) {
  const int32_t root = static_cast<int32_t>(::getpid());
  uint32_t word = 1;
  uint32_t seen = word;
  BOOST_TEST(shim_name_lock_take_word_in(&word, seen, MyTid(), kForever, root) == 0, "taken over: look again");
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(MyTid()));
  shim_name_lock_give_word(&word, MyTid());
  word = 1;
  BOOST_TEST(shim_name_lock_take_word_in(&word, 1, MyTid(), 20 * 1000 * 1000, 0) == -1);
  BOOST_TEST(Owner(word) == 1u);
}

// A thread of the session (here of this process, which is the root) is
// waited for as before, within the bound.
BOOST_AUTO_TEST_CASE(ALockOfAThreadOfTheSessionIsWaitedForWithinTheBound) {
  std::atomic<bool> done{false};
  std::atomic<int32_t> other{0};
  uint32_t word = 0;
  std::thread t([&] {
    other = MyTid();
    if (shim_name_lock_take_word(&word, 0, other, kForever) != 1) return;
    while (!done) std::this_thread::yield();
    shim_name_lock_give_word(&word, other);
  });
  while (Owner(__atomic_load_n(&word, __ATOMIC_ACQUIRE)) == 0) std::this_thread::yield();
  BOOST_TEST(shim_name_lock_take_word_in(&word, 0, MyTid(), 20 * 1000 * 1000, static_cast<int32_t>(::getpid())) == -1);
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(other.load()));
  done = true;
  t.join();
}

BOOST_AUTO_TEST_CASE(AWaitForAnOwnerThatNeverGivesEndsUnlocked) {
  std::atomic<bool> done{false};
  std::atomic<int32_t> other{0};
  uint32_t word = 0;
  std::thread t([&] {
    other = MyTid();
    if (shim_name_lock_take_word(&word, 0, other, kForever) != 1) return;
    while (!done) std::this_thread::yield();
    shim_name_lock_give_word(&word, other);
  });
  while (Owner(__atomic_load_n(&word, __ATOMIC_ACQUIRE)) == 0) std::this_thread::yield();
  // A bound of 20 ms: the take gives up (the call then goes on unlocked).
  BOOST_TEST(shim_name_lock_take_word(&word, 0, MyTid(), 20 * 1000 * 1000) == -1);
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(other.load()));
  BOOST_TEST((word & GUARD_RING_LOCK_WAITERS) != 0u, "the waiter said so");
  done = true;
  t.join();
  BOOST_TEST(Owner(word) == 0u);
  BOOST_TEST((word & GUARD_RING_LOCK_WAITERS) == 0u, "the release cleared it");
}

BOOST_AUTO_TEST_CASE(AThreadInsideItsOwnLockDoesNotWaitForItself) {
  uint32_t word = 0;
  BOOST_REQUIRE(shim_name_lock_take_word(&word, 0, MyTid(), kForever) == 1);
  // A signal handler's call on the same name, inside the call that holds it.
  BOOST_TEST(shim_name_lock_take_word(&word, word, MyTid(), kForever) == -1);
  BOOST_TEST(Owner(word) == static_cast<uint32_t>(MyTid()));
  shim_name_lock_give_word(&word, MyTid());
}

BOOST_AUTO_TEST_CASE(GenerationsWrapWithoutTouchingTheOwnerOrTheWaiters) {
  uint32_t word = GUARD_RING_LOCK_GEN_MASK;  // the last generation, free
  BOOST_REQUIRE(shim_name_lock_take_word(&word, word, MyTid(), kForever) == 1);
  shim_name_lock_give_word(&word, MyTid());
  BOOST_TEST(word == 0u);
}

BOOST_AUTO_TEST_CASE(ManyThreadsTakeTurns) {
  uint32_t word = 0;
  int inside = 0, most = 0, turns = 0;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      int32_t tid = MyTid();
      for (int j = 0; j < 2000; ++j) {
        uint32_t seen = __atomic_load_n(&word, __ATOMIC_ACQUIRE);
        if (shim_name_lock_take_word(&word, seen, tid, kForever) < 0) {
          ++refused;
          return;
        }
        int now = ++inside;  // under the lock: plain accesses
        if (now > most) most = now;
        ++turns;
        --inside;
        shim_name_lock_give_word(&word, tid);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  BOOST_TEST(refused == 0);
  BOOST_TEST(most == 1);
  BOOST_TEST(turns == 8 * 2000);
}

}  // namespace
