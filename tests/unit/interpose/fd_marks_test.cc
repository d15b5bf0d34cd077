// The shim's fd marks (interpose/fd_marks.h): a pending fd is captured at
// exactly one first change, even when several threads change it at once;
// closing clears; fds beyond the table are never pending.
#define BOOST_TEST_MODULE fd_marks
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "interpose/fd_marks.h"

namespace {

BOOST_AUTO_TEST_CASE(PendingFdIsClaimedOnceThenNothingIsPending) {
  shim_fd_mark_pending(7);
  BOOST_TEST(shim_fd_is_pending(7));
  BOOST_TEST(shim_fd_claim(7) == 1);
  shim_fd_captured(7);
  BOOST_TEST(!shim_fd_is_pending(7));
  BOOST_TEST(shim_fd_claim(7) == 0);
  // Captured, but still known as opened for writing through the shim.
  BOOST_TEST(shim_fd_is_known(7));
}

BOOST_AUTO_TEST_CASE(ClosedFdStartsCleanWhenItsNumberComesBack) {
  shim_fd_mark_pending(8);
  shim_fd_clear(8);
  BOOST_TEST(!shim_fd_is_pending(8));
  BOOST_TEST(!shim_fd_is_known(8));
  BOOST_TEST(shim_fd_claim(8) == 0);
}

BOOST_AUTO_TEST_CASE(FdsOutsideTheTableAreNeverPending) {
  shim_fd_mark_pending(SHIM_FD_MARKS);
  shim_fd_mark_pending(-1);
  BOOST_TEST(!shim_fd_is_pending(SHIM_FD_MARKS));
  BOOST_TEST(!shim_fd_is_pending(-1));
  BOOST_TEST(shim_fd_claim(SHIM_FD_MARKS) == 0);
  BOOST_TEST(shim_fd_scan_limit() <= SHIM_FD_MARKS);
}

BOOST_AUTO_TEST_CASE(ScanLimitCoversEveryMarkedFd) {
  shim_fd_mark_pending(300);
  BOOST_TEST(shim_fd_scan_limit() >= 301);
  shim_fd_clear(300);
}

// Many threads make their first change at once: one captures, and none
// returns before that capture is done (the others wait for it).
BOOST_AUTO_TEST_CASE(ConcurrentFirstChangesCaptureOnceAndWaitForIt) {
  for (int round = 0; round < 200; ++round) {
    shim_fd_mark_pending(9);
    std::atomic<int> claims{0}, done{0}, returned_early{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        if (shim_fd_claim(9)) {
          claims.fetch_add(1);
          std::this_thread::yield();  // the capture
          done.store(1);
          shim_fd_captured(9);
        } else if (done.load() == 0) {
          returned_early.fetch_add(1);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    BOOST_TEST(claims.load() == 1);
    BOOST_TEST(returned_early.load() == 0);
  }
}

}  // namespace
