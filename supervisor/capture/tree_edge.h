// Whether a path below the root can be followed without leaving the tree:
// the check the seal and the work saver make before they read a path, so
// that a directory replaced by a symlink (or a file) never leads them to a
// file outside the root.
#pragma once

#include <string>

namespace guard {

// Whether a directory above `rel` (root-relative), below the root, is a
// symlink or not a directory: then nothing is at `rel` beneath the root, and
// opening the path would read a file outside it. One openat2 that follows no
// symlink answers most calls: it opens the parent when every component is a
// directory, fails with ENOENT when one is absent (the lstat of `rel` then
// says so). Every other failure (ELOOP or ENOTDIR: a symlink or a file on
// the way, perhaps above the root; EPERM from a sandbox; EMFILE) is left to
// a walk of one lstat per component below the root. `root` is canonical.
bool ParentLeavesTheTree(const std::string& root, const std::string& rel);

}  // namespace guard
