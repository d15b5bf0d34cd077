// MarkListener: the supervisor's end of the mark channel (mark_channel.h).
// One thread accepts the connections of `guard mark` on the socket named
// after this process, answers only the processes this process is an
// ancestor of, and answers each request only after the barrier hook has
// returned: the mark's record follows every change made before it.
//
// The hooks are the session's (commands/session.cc):
//   barrier: under --mode preload, waits until the shim's ring has been
//            drained past everything put in it before the request; in
//            watch mode, saves everything changed before now.
//   mark:    records the mark (Capture::Mark through the feed's lock) and
//            returns its number, or -errno.
// Requests are answered one at a time, in the order they come.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>

#include <spdlog/logger.h>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class MarkListener {
 public:
  struct Hooks {
    std::function<Status()> barrier;
    std::function<long(pid_t pid, std::string_view label, bool step)> mark;
  };

  MarkListener(Hooks hooks, std::shared_ptr<spdlog::logger> log) : hooks_(std::move(hooks)), log_(std::move(log)) {}
  ~MarkListener() { Stop(); }
  MarkListener(const MarkListener&) = delete;
  MarkListener& operator=(const MarkListener&) = delete;

  // Listens on MarkSocketName(getpid()) and starts the thread. An error
  // (the name is taken) leaves marks to the tracer alone; the session goes on.
  Status Start();
  // Stops accepting and joins the thread; a request being answered is
  // answered first.
  void Stop();

  uint64_t marks() const { return marks_.load(std::memory_order_relaxed); }
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  void Loop();
  void Serve(int fd);
  // Whether the connected peer is a process of this session (a
  // descendant of this process, still the same process); *pid its pid.
  bool PeerIsOurs(int fd, pid_t* pid);

  Hooks hooks_;
  std::shared_ptr<spdlog::logger> log_;
  UniqueFd listen_;
  UniqueFd stop_read_, stop_write_;  // a byte, or the write end closed, stops the loop
  std::thread thread_;
  // Counters for the log and the tests; written by the listener's thread.
  std::atomic<uint64_t> marks_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace guard
