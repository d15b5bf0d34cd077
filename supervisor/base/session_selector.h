// Which session a command acts on: --session ID, where ID is a full id, a
// unique prefix (or, failing one, a unique hex suffix), `last` or `last~N`
// (N sessions before the last); without it, the last session of the
// current root.
#pragma once

#include <string>

#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

// The root whose sessions a command acts on: `explicit_root` (--root) if
// given (ResolveRecordedRoot: it may have been removed); else the nearest
// directory at or above the current one that is the root of a recorded
// session, as git looks for .git (the nearest one wins), so that a command
// run from a subdirectory of a root that is no git work tree, or from a
// root that was removed, finds its sessions; else FindRoot's answer.
Status FindSessionRoot(const StateDir& state, const std::string& explicit_root, std::string* root);

// On failure the status message is the one-line error to print (it names
// the candidates of an ambiguous prefix); the caller exits 2.
Status SelectSession(const StateDir& state, const std::string& spec, const std::string& root,
                     std::string* id);

}  // namespace guard
