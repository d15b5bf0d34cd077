#include "supervisor/recover_command.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/state_dir.h"
#include "supervisor/recovery.h"

namespace guard {
namespace {

void Print(const RecoveryReport& r) {
  std::fprintf(stderr,
               "guard: recovered session %s: %llu torn journal byte%s dropped, %zu adopted blob%s resolved, "
               "%zu final state%s recorded (%.2f s)\n",
               r.id.c_str(), static_cast<unsigned long long>(r.dropped_bytes), r.dropped_bytes == 1 ? "" : "s",
               r.resolved_blobs, r.resolved_blobs == 1 ? "" : "s", r.final_states,
               r.final_states == 1 ? "" : "s", r.seconds);
  for (const std::string& p : r.problems) std::fprintf(stderr, "guard:   journal damage: %s\n", p.c_str());
}

bool InsideSession() {
  const char* s = std::getenv("GUARD_SESSION");
  return s != nullptr && *s != '\0';
}

}  // namespace

int RecoverCommand::Run() {
  if (InsideSession()) {
    std::fprintf(stderr, "guard: recover cannot run inside a guard session\n");
    return 1;
  }
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  std::vector<RecoveryReport> reports;
  s = RecoverOrphans(state, "", &reports);
  for (const RecoveryReport& r : reports) Print(r);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
    return 1;
  }
  if (reports.empty()) std::fprintf(stderr, "guard: no session needs recovery\n");
  return 0;
}

void RecoverBeforeCommand(const std::string& root, bool quiet) {
  if (InsideSession()) return;
  StateDir state;
  if (!StateDir::Open(&state).ok()) return;  // the command itself reports it
  std::vector<RecoveryReport> reports;
  Status s = RecoverOrphans(state, root, &reports);
  if (quiet) return;
  for (const RecoveryReport& r : reports) Print(r);
  if (!s.ok()) std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
}

}  // namespace guard
