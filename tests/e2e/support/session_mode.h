// Which capture mode the suite's guard runs use (GUARD_MODE, as the suite's
// CTest labels set it; unset is guard's default, auto).
#pragma once

#include <stdlib.h>

#include <string>

namespace guard::e2e {

// Whether the shim captures in the sessions this test runs (auto and
// preload): a test whose expected records differ between the shim and the
// tracer says so through this.
inline bool ShimCaptures() {
  const char* mode = getenv("GUARD_MODE");
  return mode == nullptr || std::string(mode) != "trace";
}

}  // namespace guard::e2e
