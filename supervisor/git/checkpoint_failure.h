// The session's note of a checkpoint that failed: sessions/<id>/checkpoint-failed,
// one line, the error of the last checkpoint of the session that failed
// even when tried a second time (docs/format.md, Part III). A checkpoint
// that succeeds removes it. `guard status` shows it, so that a failure
// printed only on a terminal nobody watched (or not at all, under -q) is
// not lost.
#pragma once

#include <string>

#include "common/state_dir.h"
#include "common/status.h"

namespace guard {

// Records `failure` (not ok) for session `id`, or removes the note (ok).
// Best effort: the checkpoint's own status is what the caller reports.
void NoteCheckpointOutcome(const StateDir& state, const std::string& id, const Status& outcome);

// The recorded failure of session `id`'s last checkpoint, or false.
bool CheckpointFailureOf(const StateDir& state, const std::string& id, std::string* message);

}  // namespace guard
