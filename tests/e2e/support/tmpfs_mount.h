// A small tmpfs for the disk-full tests, mounted in a private mount
// namespace of this test process so that nothing outside it sees the mount
// and it cannot outlive the test: unshare(CLONE_NEWNS), then "/" made
// recursively private, then `mount -t tmpfs -o size=N`. The children the
// test starts (guard, the commands it runs) inherit the namespace.
// Needs root (CAP_SYS_ADMIN); CanMountTmpfs() says whether this process can.
#pragma once

#include <cstdint>
#include <string>

namespace guard::e2e {

class TmpfsMount {
 public:
  // Mounts a tmpfs of `bytes` bytes on the existing directory `dir`.
  // Throws std::runtime_error when it cannot.
  TmpfsMount(const std::string& dir, uint64_t bytes);
  ~TmpfsMount();  // unmounts (lazily, should a process still use it)
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  const std::string& dir() const { return dir_; }
  // Bytes still free for a file on the mount (statvfs f_bavail * f_frsize).
  uint64_t FreeBytes() const;

 private:
  std::string dir_;
};

// Whether this process can make such mounts; if not, `why` says why (for the
// message of a skipped test).
bool CanMountTmpfs(std::string* why);

}  // namespace guard::e2e
