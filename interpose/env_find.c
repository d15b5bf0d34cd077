#include "interpose/env_find.h"

#include <stddef.h>

const char* shim_env_find(char* const* envp, const char* name) {
  if (envp == NULL) return NULL;
  for (; *envp != NULL; ++envp) {
    const char* e = *envp;
    const char* n = name;
    while (*n != '\0' && *e == *n) ++e, ++n;
    if (*n == '\0' && *e == '=') return e + 1;
  }
  return NULL;
}
