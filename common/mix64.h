/* splitmix64's finaliser: a well mixed 64-bit value from any input (a
 * counter stepped by the golden ratio, a pair of numbers folded into one).
 * Not a cryptographic hash. C and C++, header only: the shim includes it
 * too, and pulls in nothing. */
#ifndef GUARD_COMMON_MIX64_H_
#define GUARD_COMMON_MIX64_H_

#include <stdint.h>

/* The step splitmix64 adds to its state between values. */
#define GUARD_MIX64_STEP 0x9e3779b97f4a7c15ull

static inline uint64_t guard_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#endif /* GUARD_COMMON_MIX64_H_ */
