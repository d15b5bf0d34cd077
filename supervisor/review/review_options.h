// What the review commands (show, diff, export, status) have in common: the
// session they look at, the moment they look at it, and colour.
#pragma once

#include <cstdint>
#include <string>

namespace guard {

// Exit statuses of the review commands: 0 done; 1 done in part (some content
// unknown) or failed; 2 the command line names no session or a bad path.
inline constexpr int kExitReviewIncomplete = 1;
inline constexpr int kExitReviewUsage = 2;

enum class ColorWhen { kAuto, kAlways, kNever };

// "auto": `fd` is a terminal and NO_COLOR is unset or empty (no-color.org).
bool UseColor(ColorWhen when, int fd);
// Parses "auto", "always", "never".
bool ParseColorWhen(const std::string& s, ColorWhen* out);

}  // namespace guard
