// A bind mount made by the test itself, before a session, in the private
// mount namespace TmpfsMount uses (nothing outside the test sees it, and it
// cannot outlive it). Needs root (CAP_SYS_ADMIN); CanMountTmpfs() says
// whether this process can.
#pragma once

#include <string>

namespace guard::e2e {

class BindMount {
 public:
  // Mounts `source` on the existing directory `dir` (mount --bind).
  // Throws std::runtime_error when it cannot.
  BindMount(const std::string& source, const std::string& dir);
  ~BindMount();  // unmounts (lazily, should a process still use it)
  BindMount(const BindMount&) = delete;
  BindMount& operator=(const BindMount&) = delete;

 private:
  std::string dir_;
};

}  // namespace guard::e2e
