// What a command does when config.toml has problems (config.h): a bad key
// keeps its built-in default, and that default must never do what the
// user's own setting would not. So a session refuses to start on a capture
// setting it is unsure of; gc and forget, and the automatic gc after a
// session or a restore, wait until the file is mended (a default retention
// must never prune what the user's setting would keep); every other command
// runs, with one line of warning per problem.
#pragma once

#include "supervisor/base/config.h"

namespace guard {

enum class ConfigUse {
  kSession,  // starts a session (guard -- CMD)
  kDeletes,  // removes sessions (gc, forget)
  kOther,    // reads, restores, everything else
};

// Says on stderr what the problems in settings->problems mean for a command
// of `use`, and turns the automatic gc off while there are any; returns -1
// when the command goes on, else its exit status (2: a session refused, 1:
// a removal that waits).
int CheckConfigProblems(ConfigUse use, Settings* settings);

}  // namespace guard
