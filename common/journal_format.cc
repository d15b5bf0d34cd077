#include "common/journal_format.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "common/coding.h"

namespace guard::journal {

uint64_t FragmentChecksum(uint8_t type, std::string_view payload) {
  char prefix[3];
  prefix[0] = static_cast<char>(type);
  EncodeFixed16(prefix + 1, static_cast<uint16_t>(payload.size()));
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, prefix, sizeof prefix);
  XXH3_64bits_update(&state, payload.data(), payload.size());
  return XXH3_64bits_digest(&state);
}

}  // namespace guard::journal
