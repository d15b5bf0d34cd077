// Colour in text output, as git colours its own: ids yellow, what was
// added green, what was removed red, what changed or needs a look yellow
// (diff has its own through git: review/git_tree_diff.cc). Whether to
// colour at all is the caller's (review/review_options.h, UseColor:
// --color, NO_COLOR, a terminal).
#pragma once

#include <string>
#include <string_view>

namespace guard {

enum class Hue { kRed, kGreen, kYellow, kCyan, kBold };

// `text` wrapped in the hue's escape sequence and a reset, when `on`; else
// `text` as it is.
std::string Paint(bool on, Hue hue, std::string_view text);

}  // namespace guard
