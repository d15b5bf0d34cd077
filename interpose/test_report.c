#include "interpose/test_report.h"

#include <stdatomic.h>
#include <stddef.h>

#include "common/shim_interface.h"
#include "interpose/shim_platform.h"
#include "interpose/env_find.h"

static int report_fd = -1;
static int raise_signal;
static int raise_at = 1;
static _Atomic int reports;

/* The value of `name` in envp, or NULL. No getenv: it may run before libc
 * set up environ for a late dlopen, and this keeps the shim's reads of the
 * environment in one style. */
static int parse_small_int(const char* s) {
  if (s == NULL || *s == '\0') return -1;
  int v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9' || v > 100000) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

void shim_test_report_configure(char* const* envp) {
  report_fd = parse_small_int(shim_env_find(envp, GUARD_ENV_SHIM_TEST_FD));
  int sig = parse_small_int(shim_env_find(envp, GUARD_ENV_SHIM_TEST_RAISE));
  raise_signal = sig > 0 && sig < 65 ? sig : 0;
  int at = parse_small_int(shim_env_find(envp, GUARD_ENV_SHIM_TEST_RAISE_AT));
  raise_at = at > 0 ? at : 1;
}

static size_t append(char* buf, size_t at, size_t cap, const char* s) {
  while (s != NULL && *s != '\0' && at + 1 < cap) buf[at++] = *s++;
  return at;
}

static size_t append_int(char* buf, size_t at, size_t cap, long v) {
  char digits[24];
  size_t n = 0;
  unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;
  do digits[n++] = (char)('0' + u % 10); while ((u /= 10) != 0 && n < sizeof digits);
  if (v < 0 && at + 1 < cap) buf[at++] = '-';
  while (n > 0 && at + 1 < cap) buf[at++] = digits[--n];
  return at;
}

void shim_test_report(const char* entry, const char* cls, const char* path, int fd) {
  if (report_fd < 0) return;
  char line[512];
  size_t at = append(line, 0, sizeof line, "guard-shim ");
  at = append_int(line, at, sizeof line, shim_platform_getpid());
  at = append(line, at, sizeof line, " ");
  at = append(line, at, sizeof line, entry);
  at = append(line, at, sizeof line, " ");
  at = append(line, at, sizeof line, cls);
  at = append(line, at, sizeof line, " ");
  if (path != NULL) {
    at = append(line, at, sizeof line, path);
  } else {
    at = append(line, at, sizeof line, "fd=");
    at = append_int(line, at, sizeof line, fd);
  }
  line[at++] = '\n';  /* append always leaves room for it */
  (void)shim_platform_write_all(report_fd, line, at);
  /* relaxed: one raise per process is all that matters, not its order. */
  if (raise_signal != 0 && atomic_fetch_add_explicit(&reports, 1, memory_order_relaxed) + 1 == raise_at) {
    shim_platform_raise(raise_signal);
  }
}
