#include "supervisor/trace/test_kill_point.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace guard {
namespace {

struct KillPoint {
  bool armed = false;       // a valid GUARD_TEST_KILL_INSIDE_CALL was given
  bool kill_guard = false;  // else the calling process
  bool after_run = false;   // else before the call runs
  long nth = 0;
  std::string path;
  long seen = 0;       // calls naming `path` let run so far
  pid_t waiting = 0;   // after_run: the thread inside the chosen call
};

bool Parse(const char* spec, KillPoint* k) {
  std::string s(spec);
  size_t a = s.find(':'), b = a == std::string::npos ? a : s.find(':', a + 1);
  size_t c = b == std::string::npos ? b : s.find(':', b + 1);
  if (c == std::string::npos) return false;
  std::string who = s.substr(0, a), when = s.substr(a + 1, b - a - 1), n = s.substr(b + 1, c - b - 1);
  k->path = s.substr(c + 1);
  if ((who != "guard" && who != "agent") || (when != "before" && when != "after") || k->path.empty()) return false;
  char* end = nullptr;
  k->nth = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end != '\0' || k->nth < 1) return false;
  k->kill_guard = who == "guard";
  k->after_run = when == "after";
  return true;
}

KillPoint& Point() {
  static KillPoint point = [] {
    KillPoint k;
    const char* spec = std::getenv("GUARD_TEST_KILL_INSIDE_CALL");
    if (spec == nullptr || *spec == '\0') return k;
    k.armed = Parse(spec, &k);
    if (!k.armed) std::fprintf(stderr, "guard: ignoring malformed GUARD_TEST_KILL_INSIDE_CALL=%s\n", spec);
    return k;
  }();
  return point;
}

void Kill(const KillPoint& k, pid_t tid) {
  // The calling process, as a whole (a thread's id names its process to kill(2)).
  kill(k.kill_guard ? getpid() : tid, SIGKILL);
}

}  // namespace

void TestKillPointCallLetRun(const Mutation& m) {
  KillPoint& k = Point();
  if (!k.armed || k.seen >= k.nth) return;
  if (m.abs != k.path && !(m.has2 && m.abs2 == k.path)) return;
  if (++k.seen < k.nth) return;
  if (k.after_run) {
    k.waiting = m.tid;
  } else {
    Kill(k, m.tid);
  }
}

bool TestKillPointCallReturned(pid_t tid) {
  KillPoint& k = Point();
  if (!k.armed || k.waiting == 0 || k.waiting != tid) return false;
  k.waiting = 0;
  Kill(k, tid);
  return true;
}

}  // namespace guard
