// Small, careful wrappers over the file syscalls: EINTR retried, short reads
// and writes handled, errors turned into Status with the path in the message.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

// Retries `expr` (a syscall returning -1 with errno) while it fails with EINTR.
#define GUARD_EINTR_RETRY(expr)                       \
  ({                                                  \
    long guard_r_;                                    \
    do guard_r_ = (long)(expr);                       \
    while (guard_r_ == -1 && errno == EINTR);         \
    guard_r_;                                         \
  })

// Writes all `n` bytes or fails; a write that makes no progress is an error.
Status WriteAll(int fd, const void* data, size_t n, std::string_view what);
Status PwriteAll(int fd, const void* data, size_t n, off_t offset, std::string_view what);
// Reads up to `n` bytes, stopping early only at end of file. *got is set.
Status ReadFull(int fd, void* data, size_t n, size_t* got, std::string_view what);
Status PreadFull(int fd, void* data, size_t n, off_t offset, size_t* got, std::string_view what);

// open(2) with O_CLOEXEC added, EINTR retried.
Status OpenFile(const std::string& path, int flags, mode_t mode, UniqueFd* out);
Status OpenFileAt(int dirfd, const std::string& name, int flags, mode_t mode, UniqueFd* out);

// The target of symlink `name` in `dirfd` (AT_FDCWD: a path), as readlinkat
// gives it (at most PATH_MAX bytes); errors name `what`.
Status ReadLinkAt(int dirfd, const std::string& name, std::string_view what, std::string* target);

Status ReadFileToString(const std::string& path, std::string* out);
// Writes `data` to `path` atomically: temporary file in the same directory,
// fsync, rename over, fsync of the directory. The file gets `mode`.
Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode);

Status FsyncFd(int fd, std::string_view what);
// The names in directory `dir_fd` ("." and ".." left out), in no order. The
// fd stays the caller's.
Status ReadDirNames(int dir_fd, std::string_view what, std::vector<std::string>* names);
// Each name in directory `dir_fd` ("." and ".." left out), in no order,
// handed to `fn` as it is read: memory stays bounded whatever the size of
// the directory. The fd stays the caller's.
Status ForEachDirName(int dir_fd, std::string_view what, const std::function<void(std::string_view)>& fn);
// The same with each entry's d_type (DT_DIR, DT_REG, ...; DT_UNKNOWN where
// the filesystem does not say: the caller stats those).
Status ForEachDirEntry(int dir_fd, std::string_view what,
                       const std::function<void(std::string_view name, unsigned char type)>& fn);
Status FsyncDir(const std::string& dir);
// mkdir -p with `mode` for every directory it creates; an existing directory
// is accepted as it is.
Status MakeDirs(const std::string& path, mode_t mode);

}  // namespace guard
