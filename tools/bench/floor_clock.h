/* The clock of the floor programs (delete_floor.c, create_floor.c,
 * rewrite_floor.c): seconds on CLOCK_MONOTONIC. */
#pragma once
#include <time.h>

static inline double floor_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
