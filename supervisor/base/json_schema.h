// The version of guard's JSON output (docs/json.md). Every object guard
// prints with --json carries it as "schema" (in sessions and show, each
// element of the array does), so that a consumer can tell which fields to
// expect. Fields are only ever added within a version; renaming or removing
// one makes the next.
#pragma once

namespace guard {

inline constexpr int kJsonSchemaVersion = 1;

}  // namespace guard
