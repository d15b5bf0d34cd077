// Paths named on a review command's line: relative to the current directory
// (or absolute), mapped to the root-relative form the journal uses. The
// mapping is lexical ("." and ".." are folded, symlinks are not followed):
// the path may no longer exist, and the journal names paths as they were.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

// `root` and `cwd` are absolute and canonical. *rel is "." for the root
// itself. A path outside the root is kInvalidArgument.
Status ToRootRelative(const std::string& root, const std::string& cwd, const std::string& arg,
                      std::string* rel);

}  // namespace guard
