// The automatic gc after a session ends: the supervisor starts `guard gc
// --auto` detached (its own session, no terminal, stdio on /dev/null, niced)
// and does not wait for it, so the user's shell gets its prompt back as
// soon as the session is sealed. `gc --auto` does nothing unless the store
// is over the policy. At most one start a minute ($GUARD_HOME/gc.log is
// rewritten by each run and dates the last).
#pragma once

#include <string>

namespace guard {

// Returns how long the caller was held, in microseconds (two forks).
long StartAutomaticGc(const std::string& state_path);

}  // namespace guard
