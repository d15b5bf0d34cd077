// What the review commands (show, diff, export, status) have in common: the
// session they look at, the moment they look at it, and colour.
#pragma once

#include <cstdint>
#include <string>

#include "common/session_history.h"
#include "common/status.h"

namespace guard {

// Exit statuses of the review commands: 0 done; 1 done in part (some content
// unknown) or failed; 2 the command line names no session or a bad path.
inline constexpr int kExitReviewIncomplete = 1;
inline constexpr int kExitReviewUsage = 2;

enum class ColorWhen { kAuto, kAlways, kNever };

// "auto": `fd` is a terminal and NO_COLOR is unset or empty (no-color.org).
bool UseColor(ColorWhen when, int fd);
// Parses "auto", "always", "never".
bool ParseColorWhen(const std::string& s, ColorWhen* out);

// The moment --to names, as the sequence number SessionChanges::Collect
// takes, and words for it in messages ("after operation 12", "at mark @2
// (label)"). "" is the session's end. A plain number is an operation's
// sequence number (as guard show prints them); anything else a mark (@N or
// its label, common/session_marks.h): the state just after the operations
// before the mark, as undo and replay --to MARK mean it. kInvalidArgument,
// with the reason, for a mark the session does not have or a number too
// large to be one.
Status ResolveReviewTo(const SessionHistory& history, const std::string& spec, uint64_t* to_seq,
                       std::string* label);

}  // namespace guard
