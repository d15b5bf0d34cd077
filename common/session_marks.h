// Marks: labelled points in a session's timeline (kMark records, written by
// the supervisor when a process of the session runs `guard mark`), and the
// turns they divide the session into. A turn is the operations after a turn
// mark (a mark not flagged kStepMark) up to the next turn mark or the end.
//
// On the command line a mark is named by its number as `guard show` prints
// it, written @N (the first mark of the session is @1), or by its label. A
// plain number stays what --to always took: an operation's sequence number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/session_history.h"
#include "common/status.h"

namespace guard {

// Whether `spec` names a mark (anything but a plain sequence number).
bool IsMarkSpec(const std::string& spec);

// The index into history.marks() of the mark `spec` names: "@N" is the Nth
// mark; anything else is a label, which must be that of exactly one mark
// (kInvalidArgument otherwise, with the marks that share it, by number).
Status FindMark(const SessionHistory& history, const std::string& spec, size_t* index);

// The journal sequence number of mark `spec`: the operations before the
// mark are exactly those with a smaller seq. A restore or a checkpoint "to
// the mark" uses it as its boundary: the state just after operation seq.
Status MarkSeq(const SessionHistory& history, const std::string& spec, uint64_t* seq);

// The sequence number of the turn mark that starts the last `turns` turns
// (turns >= 1): undoing everything after it undoes those turns.
// kInvalidArgument when the session has fewer turn marks.
Status TurnsStartSeq(const SessionHistory& history, uint64_t turns, uint64_t* seq);

}  // namespace guard
