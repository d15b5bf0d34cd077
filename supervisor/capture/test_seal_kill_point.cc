#include "supervisor/capture/test_seal_kill_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace guard {
namespace {

// -1: unarmed. Read once, before the seal's threads start (the first call
// comes from the sealing thread alone).
long KillAt() {
  static const long at = [] {
    const char* spec = std::getenv("GUARD_TEST_KILL_IN_SEAL");
    if (spec == nullptr || *spec == '\0') return -1L;
    char* end = nullptr;
    long n = std::strtol(spec, &end, 10);
    if (*end != '\0' || n < 0) {
      std::fprintf(stderr, "guard: ignoring malformed GUARD_TEST_KILL_IN_SEAL=%s\n", spec);
      return -1L;
    }
    return n;
  }();
  return at;
}

}  // namespace

void TestKillInSeal(SessionState state, size_t placed) {
  long at = KillAt();
  if (at < 0 || state == SessionState::kRecovered || placed != static_cast<size_t>(at)) return;
  kill(getpid(), SIGKILL);
}

}  // namespace guard
