#include "tests/e2e/support/tmpfs_mount.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace guard::e2e {
namespace {

// Enters a private mount namespace once per process; 0 or the errno.
int EnterPrivateNamespace() {
  static int result = [] {
    if (unshare(CLONE_NEWNS) != 0) return errno;
    // Without this, mounts made here would propagate back to the parent
    // namespace through shared peer groups (systemd makes "/" shared).
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
    return 0;
  }();
  return result;
}

}  // namespace

bool CanMountTmpfs(std::string* why) {
  if (geteuid() != 0) {
    *why = "mounting a tmpfs needs root (this test runs as uid " + std::to_string(geteuid()) + ")";
    return false;
  }
  if (int err = EnterPrivateNamespace(); err != 0) {
    *why = std::string("cannot enter a private mount namespace: ") + std::strerror(err);
    return false;
  }
  return true;
}

TmpfsMount::TmpfsMount(const std::string& dir, uint64_t bytes) : dir_(dir) {
  if (int err = EnterPrivateNamespace(); err != 0) {
    throw std::runtime_error(std::string("unshare(CLONE_NEWNS): ") + std::strerror(err));
  }
  std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    throw std::runtime_error("mount -t tmpfs -o " + options + " " + dir + ": " + std::strerror(errno));
  }
}

TmpfsMount::~TmpfsMount() { umount2(dir_.c_str(), MNT_DETACH); }

uint64_t TmpfsMount::FreeBytes() const {
  struct statvfs v;
  if (statvfs(dir_.c_str(), &v) != 0) throw std::runtime_error("statvfs " + dir_ + ": " + std::strerror(errno));
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

}  // namespace guard::e2e
