#include "supervisor/restore/restore_kill_point.h"

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
  const char* path = std::getenv("GUARD_TEST_PAUSE_RESTORE");
  if (path == nullptr || *path == '\0') return;
  FILE* f = std::fopen(path, "we");
  if (f == nullptr) return;
  std::fclose(f);
  for (int i = 0; i < 6000 && access(path, F_OK) == 0; ++i) usleep(10 * 1000);
}

}  // namespace guard
