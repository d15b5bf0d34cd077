#include "supervisor/capture/tree_edge.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "common/file_io.h"
#include "common/os_calls.h"

namespace guard {

bool ParentLeavesTheTree(const std::string& root, const std::string& rel) {
  // Set once by whichever thread first meets a kernel without openat2
  // (relaxed: a thread that misses it only tries openat2 once more).
  static std::atomic<bool> no_openat2{false};
  size_t last = rel.rfind('/');
  if (last == std::string::npos) return false;
  std::string path = root == "/" ? "" : root;
  if (!no_openat2.load(std::memory_order_relaxed)) {
    std::string parent = path + "/" + rel.substr(0, last);
    long fd = GUARD_EINTR_RETRY(os::OpenAt2(AT_FDCWD, parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                            os::kResolveNoSymlinks | os::kResolveNoMagiclinks));
    if (fd >= 0) {
      close(static_cast<int>(fd));
      return false;
    }
    // ENOENT: a component is absent (the walk would say the same: not
    // leaving); EACCES: one cannot be searched (the walk's lstat fails
    // alike). Any other error (a symlink or a file on the way, a sandbox
    // that refuses openat2 with EPERM, no fd left, a name too long) is
    // settled by the walk: this check fails closed.
    if (errno == ENOENT || errno == EACCES) return false;
    if (errno == ENOSYS || errno == E2BIG || errno == EPERM) no_openat2.store(true, std::memory_order_relaxed);
  }
  for (size_t start = 0;;) {
    size_t slash = rel.find('/', start);
    if (slash == std::string::npos) return false;
    path += "/" + rel.substr(start, slash - start);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return false;  // absent: the lstat of rel says so
    if (!S_ISDIR(st.st_mode)) return true;
    start = slash + 1;
  }
}


}  // namespace guard
