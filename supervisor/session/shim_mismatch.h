// What guard says when a preload shim of another protocol refused the
// session (common/shim_interface.h): the shim reports itself in the ring
// header's shim_mismatch word, and the live feed turns that word into one
// line, on stderr and in the session's log, once per session.
#pragma once

#include <cstdint>
#include <string>

#include "common/shim_interface.h"

namespace guard {

// The word, read where a shim may set it at any time (relaxed: nothing else
// is published with it).
inline uint32_t LoadShimMismatch(const guard_ring_header* header) {
  return __atomic_load_n(&header->shim_mismatch, __ATOMIC_RELAXED);
}

// The line for `word` ("a program of this session loaded a preload shim of
// protocol 2; ...", without "guard: "), naming the protocol this guard
// speaks and what the refusing shim does with the calls it leaves; "" when
// the word reports nothing (0, or a shim of guard's own protocol).
std::string ShimMismatchLine(uint32_t word);

}  // namespace guard
