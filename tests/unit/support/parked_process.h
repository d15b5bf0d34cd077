// A child process parked in a state a test chose (its cwd, its open fds), to
// stand for a stopped tracee: guard reads a tracee's view of the filesystem
// from /proc/PID (cwd, fd/N, root), which works for any child of the same
// user, traced or not.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include <boost/test/unit_test.hpp>

namespace guard::testing {

class ParkedProcess {
 public:
  // Forks a child that runs `setup` (chdir, open, dup2...; it returns false
  // on failure) and then waits until the ParkedProcess is destroyed, when
  // it runs `teardown` (to remove what only it can reach) and exits.
  explicit ParkedProcess(std::function<bool()> setup, std::function<void()> teardown = nullptr) {
    int ready[2], hold[2];
    BOOST_REQUIRE(pipe2(ready, O_CLOEXEC) == 0 && pipe2(hold, O_CLOEXEC) == 0);
    pid_ = fork();
    BOOST_REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      close(ready[0]);
      close(hold[1]);
      char ok = setup() ? 1 : 0;
      if (write(ready[1], &ok, 1) != 1) _exit(1);
      close(ready[1]);
      char byte;
      while (read(hold[0], &byte, 1) > 0) {
      }
      if (teardown) teardown();
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    hold_ = hold[1];
    char ok = 0;
    bool read_ok = read(ready[0], &ok, 1) == 1;
    close(ready[0]);
    BOOST_REQUIRE_MESSAGE(read_ok && ok == 1, "the parked process could not set itself up");
  }
  ~ParkedProcess() {
    close(hold_);
    int status;
    waitpid(pid_, &status, 0);
  }
  ParkedProcess(const ParkedProcess&) = delete;
  ParkedProcess& operator=(const ParkedProcess&) = delete;

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int hold_ = -1;
};

}  // namespace guard::testing
