// Ctrl-C (SIGINT), SIGTERM and SIGHUP while a restore applies its plan:
// caught, so that the restore stops at a consistent point (after the change
// under way; files staged but not yet renamed into place are removed),
// seals its session as an interrupted restore with what it did, and says
// so, instead of dying half-way with its session left for recovery
// (docs/restore.md, "An interrupted restore"). The handler only notes the
// signal; ApplyRestore asks between changes.
#pragma once

namespace guard {

// Installs the handlers. `restart` (SA_RESTART): a write under way is not
// cut short; without it, a read that waits (the confirmation prompt's)
// returns at the signal, so that Ctrl-C there cancels instead of waiting on.
// A signal caught before the restore's own session starts cancels it: no
// change has been made, nothing is recorded (restore_command.cc).
void CatchRestoreInterrupts(bool restart = true);
// The first signal caught since, or 0.
int RestoreInterruptSignal();

}  // namespace guard
