// The protected root: --root DIR, else the top of the git work tree that
// contains the current directory, else the current directory.
#pragma once

#include <string>

#include "common/status.h"

namespace guard {

// `explicit_root` may be empty. *out is absolute and canonical.
Status FindRoot(const std::string& explicit_root, std::string* out);

}  // namespace guard
