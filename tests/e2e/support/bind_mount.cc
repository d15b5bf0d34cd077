#include "tests/e2e/support/bind_mount.h"

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tests/e2e/support/tmpfs_mount.h"

namespace guard::e2e {

BindMount::BindMount(const std::string& source, const std::string& dir) : dir_(dir) {
  std::string why;
  // Enters the private mount namespace (once per process).
  if (!CanMountTmpfs(&why)) throw std::runtime_error(why);
  if (mount(source.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    throw std::runtime_error("mount --bind " + source + " " + dir + ": " + std::strerror(errno));
  }
}

BindMount::~BindMount() { umount2(dir_.c_str(), MNT_DETACH); }

}  // namespace guard::e2e
