#include "supervisor/session/shim_mismatch.h"

namespace guard {

std::string ShimMismatchLine(uint32_t word) {
  const uint32_t theirs = GUARD_SHIM_MISMATCH_PROTOCOL(word);
  if ((word & GUARD_SHIM_MISMATCH_SEEN) == 0 || theirs == GUARD_SHIM_PROTOCOL) return "";
  std::string line = "a program of this session loaded a preload shim of protocol " + std::to_string(theirs) +
                     "; this guard speaks protocol " + std::to_string(GUARD_SHIM_PROTOCOL) +
                     " (guard installed during the session?): ";
  if ((word & GUARD_SHIM_MISMATCH_ALONE) == 0) return line + "the tracer alone captures the programs it is loaded in";
  if ((word & GUARD_SHIM_MISMATCH_BLOCK) != 0) {
    return line + "nothing captures the programs it is loaded in, and their changes are refused "
                  "(--on-capture-failure=block)";
  }
  return line + "nothing captures the programs it is loaded in, and their changes run unrecorded "
                "(--on-capture-failure=allow)";
}

}  // namespace guard
