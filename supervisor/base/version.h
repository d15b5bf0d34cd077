// The version guard names in `guard --version` and in every meta.json, and
// the commit it was built from (git describe at build time, or "unknown"
// outside a git checkout). Defined in the generated build/generated/version.cc
// (packaging/version.cmake).
#pragma once

namespace guard {

extern const char* const kGuardVersion;  // "0.1.0"
extern const char* const kGuardCommit;   // "39f57ae", "v0.1.0-3-g39f57ae-dirty", or "unknown"

}  // namespace guard
