#include "supervisor/restore/restore_kill_point.h"

#include "supervisor/restore/restore_interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace guard {
namespace {

struct KillPoint {
  bool armed = false;
  bool after = false;  // else before
  long nth = 0;
  long seen = 0;  // changes announced so far
};

// GUARD_TEST_PAUSE_RESTORE_AT, read once: the change to pause at (0: none).
long PauseAt() {
  static const long at = [] {
    const char* spec = std::getenv("GUARD_TEST_PAUSE_RESTORE_AT");
    if (spec == nullptr || *spec == '\0') return 0L;
    char* end = nullptr;
    long n = std::strtol(spec, &end, 10);
    if (*end != '\0' || n < 1) {
      std::fprintf(stderr, "guard: ignoring malformed GUARD_TEST_PAUSE_RESTORE_AT=%s\n", spec);
      return 0L;
    }
    return n;
  }();
  return at;
}

// Creates the pause file, then waits until the test removes it or a signal
// the restore catches arrives (restore_interrupt.h), at most 60 s.
void Pause() {
  const char* path = std::getenv("GUARD_TEST_PAUSE_RESTORE");
  if (path == nullptr || *path == '\0') return;
  FILE* f = std::fopen(path, "we");
  if (f == nullptr) return;
  std::fclose(f);
  for (int i = 0; i < 6000 && access(path, F_OK) == 0 && RestoreInterruptSignal() == 0; ++i) usleep(10 * 1000);
}

long changes_seen = 0;  // every change announced, armed or not

KillPoint& Point() {
  static KillPoint point = [] {
    KillPoint k;
    const char* spec = std::getenv("GUARD_TEST_KILL_RESTORE");
    if (spec == nullptr || *spec == '\0') return k;
    std::string s(spec);
    size_t colon = s.find(':');
    std::string when = s.substr(0, colon);
    char* end = nullptr;
    if (colon != std::string::npos) k.nth = std::strtol(s.c_str() + colon + 1, &end, 10);
    k.armed = (when == "before" || when == "after") && end != nullptr && *end == '\0' && k.nth >= 1;
    k.after = when == "after";
    if (!k.armed) std::fprintf(stderr, "guard: ignoring malformed GUARD_TEST_KILL_RESTORE=%s\n", spec);
    return k;
  }();
  return point;
}

}  // namespace

void RestoreKillPointBefore() {
  if (++changes_seen == PauseAt()) Pause();
  KillPoint& k = Point();
  if (!k.armed) return;
  if (++k.seen == k.nth && !k.after) kill(getpid(), SIGKILL);
}

void RestoreKillPointAfter() {
  KillPoint& k = Point();
  if (k.armed && k.seen == k.nth && k.after) kill(getpid(), SIGKILL);
}

}  // namespace guard

namespace guard {

void RestoreTestPause() {
  if (PauseAt() == 0) Pause();
}

}  // namespace guard
