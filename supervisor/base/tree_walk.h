// Reading directory trees without following a symlink: the one walk below a
// directory (the entries a directory move carries, the link index, the
// names sealing records below moved directories) and the one way to open a
// directory beneath another.
//
// Every directory is opened relative to its parent's fd with O_NOFOLLOW, and
// every entry examined with fstatat(AT_SYMLINK_NOFOLLOW): a symlink put
// where a directory was, during the walk or before it, is met as the symlink
// it is and never entered. Plain openat, not openat2: guard's own commands
// may run traced (inside a session, `guard undo` still runs under the outer
// guard), and the seccomp filter cannot read openat2's flags, so every
// openat2 would stop them.
#pragma once

#include <sys/stat.h>

#include <climits>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

// Whether `rel` is "." or plain names joined by single slashes: not empty,
// not absolute, no "", "." or ".." component, no NUL byte.
bool IsPlainRelative(std::string_view rel);

// Opens directory `rel` (IsPlainRelative; "." is `dir_fd` itself) beneath
// directory `dir_fd`, one component at a time, never following a symlink:
// a component that is a symlink fails with ELOOP, one that is not a
// directory with ENOTDIR, a `rel` that is not plain with EINVAL. `flags`
// apply to the last component (O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC are
// added), O_PATH to the ones before. Errors name `rel`; Status::err() holds
// the errno.
Status OpenDirBeneath(int dir_fd, std::string_view rel, int flags, UniqueFd* out);

// One entry met by WalkTree.
struct TreeEntry {
  int dir_fd;               // the directory holding it, open during the visit
  const std::string& name;  // its name in dir_fd
  const std::string& rel;   // the walk's top name and the names below, joined by '/'
  const struct stat& st;    // its own lstat
  int depth;                // 0 for an entry of the walked directory itself
  // For a directory the walk went into: whether it could be opened and
  // listed (a failure deeper down is reported at the entry where it
  // happened). Ok for everything else.
  const Status& listed;
};

struct TreeWalkOptions {
  // Into which directories the walk goes; all when empty.
  std::function<bool(const TreeEntry&)> descend;
};

// Visits everything below the open directory `dir_fd`, whose name is
// `top` ("." or "" for none: the entries are then named by their own names),
// children before their directory, the names of each directory in byte
// order. An entry that vanishes before it is examined is skipped. Returns
// whether `dir_fd` itself could be listed.
Status WalkTree(int dir_fd, const std::string& top, const TreeWalkOptions& options,
                const std::function<void(const TreeEntry&)>& visit);

}  // namespace guard
