// Removing one object a running session stored and no longer needs (an
// intermediate version thinned when the store's cap binds: docs/gc.md,
// "Inside a session"), by the sweep's own steps (docs/format.md (Part II),
// "Garbage collection"): moved to trash/, its mtime looked at again, and
// unlinked only if no writer refreshed it meanwhile. A writer that
// refreshes it after the move finds it gone and places its own copy.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "common/blob_store.h"
#include "common/blob_store_layout.h"
#include "common/clock.h"
#include "common/os_calls.h"

namespace guard {

using namespace store_layout;

Status BlobStore::RemoveIfUntouched(const BlobKey& key, int64_t mtime_ns, bool* removed, uint64_t* freed) {
  *removed = false;
  *freed = 0;
  const int fd = dirfd_.get();
  for (ObjectKind kind : kObjectKinds) {
    const std::string name = ObjectName(key, kind);
    struct stat st;
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return Status::FromErrno(dir_ + "/" + name, errno);
    }
    if (TimespecNs(st.st_mtim) != mtime_ns) continue;  // refreshed: a writer names it
    const std::string trash = std::string(kTrashDir) + "/" + name.substr(name.rfind('/') + 1);
    if (::renameat(fd, name.c_str(), fd, trash.c_str()) != 0) {
      if (errno == ENOENT) continue;
      return Status::FromErrno(dir_ + "/" + name, errno);
    }
    if (::fstatat(fd, trash.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && TimespecNs(st.st_mtim) != mtime_ns) {
      // Refreshed between the look and the move: put back (unless the
      // writer has placed it again already).
      if (os::RenameNoReplace(fd, trash.c_str(), fd, name.c_str()) != 0) (void)::unlinkat(fd, trash.c_str(), 0);
      continue;
    }
    if (::unlinkat(fd, trash.c_str(), 0) != 0) return Status::FromErrno(dir_ + "/" + trash, errno);
    *removed = true;
    *freed += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return Status::Ok();
}

}  // namespace guard
