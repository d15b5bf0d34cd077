// Whole numbers typed by a user (a mark's @N, a session's last~N): parsed
// with bounds, never by a function that throws or wraps. Every number guard
// takes from a command line or a file a user edits goes through here.
#pragma once

#include <cstdint>
#include <string_view>

namespace guard {

// `text` is one or more decimal digits whose value is at most `max`: *out
// is that value. Otherwise false and *out is untouched (empty, a sign, a
// space, another character, or a value above `max`, however many digits).
bool ParseDecimal(std::string_view text, uint64_t max, uint64_t* out);

}  // namespace guard
