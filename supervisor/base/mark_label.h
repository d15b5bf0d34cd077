// A mark's label as the session records it, whichever way the mark reaches
// the session (the tracer's mark call, trace/mark_call.h, or another).
#pragma once

#include <cstddef>
#include <string_view>

namespace guard {

// Longer labels are cut (at a UTF-8 character boundary) by the caller.
inline constexpr size_t kMaxMarkLabel = 512;

// `label` cut to at most kMaxMarkLabel bytes, not inside a UTF-8 character.
std::string_view CutMarkLabel(std::string_view label);

}  // namespace guard
