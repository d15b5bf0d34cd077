#include "interpose/temp_name.h"

#include <stddef.h>
#include <string.h>

#include "common/mix64.h"

static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

char* shim_temp_xs(char* templ, int suffixlen) {
  if (suffixlen < 0) return NULL;
  size_t len = strlen(templ);
  if (len < (size_t)SHIM_TEMP_XS + (size_t)suffixlen) return NULL;
  char* xs = templ + len - SHIM_TEMP_XS - (size_t)suffixlen;
  for (int i = 0; i < SHIM_TEMP_XS; ++i) {
    if (xs[i] != 'X') return NULL;
  }
  return xs;
}

/* splitmix64: every call a new, well mixed value from a counter, so that
 * the attempts after an EEXIST do not repeat one another. */
static uint64_t next(uint64_t* state) { return guard_mix64(*state += GUARD_MIX64_STEP); }

void shim_temp_fill(char* xs, uint64_t* state) {
  uint64_t v = next(state);
  for (int i = 0; i < SHIM_TEMP_XS; ++i) {
    xs[i] = letters[v % 62];
    v /= 62;
  }
}
