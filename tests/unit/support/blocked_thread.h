// Waiting for another thread of the test to block on a lock, as the kernel
// sees it, rather than sleeping and hoping it got there: a thread waiting
// for a std::mutex or a condition variable sleeps in futex(2), which
// /proc/self/task/TID/syscall names while it does ("running" otherwise).
#pragma once

#include <sys/syscall.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace guard::testing {

// Returns once the thread whose id `tid` holds (0 until that thread has
// set it, with gettid()) sleeps in futex(2), or false after a minute (no
// time limit a slow machine could miss).
inline bool WaitUntilBlockedInFutex(const std::atomic<pid_t>& tid) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < give_up) {
    if (pid_t t = tid.load(); t != 0) {
      std::ifstream in("/proc/self/task/" + std::to_string(t) + "/syscall");
      std::string number;
      if (in >> number && number == std::to_string(SYS_futex)) return true;
    }
    std::this_thread::yield();
  }
  return false;
}

}  // namespace guard::testing
