#include "supervisor/capture/thread_past_call.h"

#include <sched.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "common/file_io.h"

namespace guard {

namespace {

// The state letter of /proc/TID/stat (after the name's closing parenthesis),
// or 0 when the thread is gone.
char ThreadState(const std::string& dir) {
  std::string stat;
  if (!ReadFileToString(dir + "/stat", &stat).ok()) return 0;
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return 0;
  return stat[close + 2];
}

// The number of the call the thread is in (/proc/TID/syscall's first
// field), -1 when it runs in user space, -2 when that cannot be read.
long CurrentCall(const std::string& dir) {
  std::string text;
  if (!ReadFileToString(dir + "/syscall", &text).ok() || text.empty()) return -2;
  if (text.compare(0, 7, "running") == 0) return -1;
  return std::strtol(text.c_str(), nullptr, 10);
}

}  // namespace

bool WaitUntilPastCall(pid_t tid, std::chrono::milliseconds limit) {
  const std::string dir = "/proc/" + std::to_string(tid) + "/task/" + std::to_string(tid);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  long first = -3;
  for (int round = 0;; ++round) {
    char state = ThreadState(dir);
    if (state == 0 || state == 't' || state == 'T' || state == 'Z' || state == 'X') return true;
    long call = CurrentCall(dir);
    if (call == -1 || call == -2) return true;
    if (first == -3) first = call;
    if (call != first) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (round < 64) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace guard
