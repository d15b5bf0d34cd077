// Which session a command acts on: --session ID, where ID is a full id, a
// unique prefix, `last` or `last~N` (N sessions before the last); without
// it, the last session of the current root.
#pragma once

#include <string>

#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

// On failure the status message is the one-line error to print (it names
// the candidates of an ambiguous prefix); the caller exits 2.
Status SelectSession(const StateDir& state, const std::string& spec, const std::string& root,
                     std::string* id);

}  // namespace guard
