#include "supervisor/trace/directory_walk.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "common/file_io.h"
#include "common/path_util.h"

namespace guard {
namespace {

constexpr uint64_t kOpenFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;

int OpenAt2(const std::string& path, uint64_t resolve) {
  struct open_how how = {};
  how.flags = kOpenFlags;
  how.resolve = resolve;
  return static_cast<int>(GUARD_EINTR_RETRY(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
}

// Set once openat2 is found missing (Linux before 5.6, or a seccomp policy
// around guard that hides it): every walk is then the caller's.
bool openat2_unusable = false;

bool Unusable(int err) { return err == ENOSYS || err == E2BIG; }

}  // namespace

std::string LexicallyNormal(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size();) {
    size_t slash = path.find('/', i);
    if (slash == std::string::npos) slash = path.size();
    std::string_view name(path.data() + i, slash - i);
    i = slash + 1;
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      out.erase(out.rfind('/') == std::string::npos ? 0 : out.rfind('/'));
      continue;
    }
    out += '/';
    out += name;
  }
  return out.empty() ? "/" : out;
}

bool WalkDirectory(const std::string& dir, UniqueFd* fd, std::string* canonical) {
  if (openat2_unusable || dir.empty() || dir[0] != '/') return false;
  // Without symlinks on the way, the name is the path itself, normalized
  // (each ".." then is the directory the previous component is in). The
  // most common case: a tree's own directories.
  int r = OpenAt2(dir, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  if (r >= 0) {
    fd->reset(r);
    *canonical = LexicallyNormal(dir);
    return true;
  }
  if (Unusable(errno)) openat2_unusable = true;
  if (errno != ELOOP) return false;
  // Through symlinks: the kernel's own name for what it reached.
  r = OpenAt2(dir, RESOLVE_NO_MAGICLINKS);
  if (r < 0) return false;
  UniqueFd opened(r);
  std::string name;
  if (!ReadLinkAt(AT_FDCWD, "/proc/self/fd/" + std::to_string(opened.get()), dir, &name).ok()) return false;
  // A name under /proc may have come through /proc/self (guard's, not the
  // tracee's); a deleted directory's name reads " (deleted)" and names
  // nothing.
  if (name.empty() || name[0] != '/' || PathIsUnder(name, "/proc")) return false;
  constexpr std::string_view kDeleted = " (deleted)";
  if (name.size() >= kDeleted.size() && name.compare(name.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    return false;
  }
  *fd = std::move(opened);
  *canonical = std::move(name);
  return true;
}

}  // namespace guard
