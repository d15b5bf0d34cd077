#include "supervisor/review/review_session.h"

#include <cstdio>

#include "common/session_meta.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/session/recovery.h"
#include "supervisor/review/review_options.h"
#include "supervisor/base/session_selector.h"

namespace guard {

int ReviewSession::Open(const std::string& spec, const std::string& explicit_root, bool with_store,
                        ReviewSession* out) {
  Status s = StateDir::Open(&out->state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  std::string root;
  s = FindSessionRoot(out->state, explicit_root, &root);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", s.ToString().c_str());
    return 1;
  }
  // Like every command but status (which reports them), a review completes
  // this root's interrupted sessions first, so that it sees their end state.
  RecoverBeforeCommand(root, false);
  s = SelectSession(out->state, spec, root, &out->id);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: %s\n", EscapeForTerminal(s.message()).c_str());
    return kExitReviewUsage;
  }
  s = SessionHistory::Load(out->state, out->id, &out->history);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: session %s: %s\n", out->id.c_str(), s.ToString().c_str());
    return 1;
  }
  const SessionMeta& m = out->history.meta();
  if (m.state == SessionState::kRunning && !SupervisorAlive(m)) {
    // Recovery above failed or was not possible (inside a guard session).
    std::fprintf(
        stderr,
        "guard: warning: session %s needs recovery (run `guard recover`); its end state is incomplete\n",
        out->id.c_str());
  }
  for (const std::string& p : out->history.problems()) {
    std::fprintf(stderr, "guard: warning: session %s: %s\n", out->id.c_str(), EscapeForTerminal(p).c_str());
  }
  if (with_store) {
    s = BlobStore::Open(out->state.store_dir(), &out->store);
    if (!s.ok()) {
      std::fprintf(stderr, "guard: blob store: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace guard
