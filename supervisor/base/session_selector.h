// Which session a command acts on: --session ID, where ID is a full id, a
// unique prefix (or, failing one, a unique hex suffix), `last` or `last~N`
// (N sessions before the last); without it, the last session of the
// current root. `last` counts the sessions of something the user ran (an
// agent, a command), not guard's own restore sessions (`guard undo`,
// `replay`, `redo`), which only their id names.
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

// The last session of `root` the user ran before session `id` (ids sort by
// start time); kNotFound if there is none.
Status SessionBefore(const StateDir& state, const std::string& root, const std::string& id, std::string* before);

}  // namespace guard
