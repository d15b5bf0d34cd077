// Running the helper programs of the review commands (git, tar): argv and a
// complete environment given by the caller, every descriptor of guard's own
// closed in the child (all are close-on-exec), stdout either passed through
// to a descriptor or collected, stderr collected for the error message, and
// the failure of exec itself reported as such rather than as exit 127.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

struct ToolRun {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // the whole environment, "NAME=value"
  std::string cwd;                // empty: guard's own
  int stdout_fd = -1;             // -1: collected into RunTool's *out
  std::string label;              // names the run in messages ("git diff"); default argv[0]
};

// Runs the program to its end. Ok if it exited with status 0, or was killed
// by SIGPIPE writing to a passed-through stdout whose reader went away; else
// the message names the program, how it ended and its first line of stderr.
Status RunTool(const ToolRun& run, std::string* out);

}  // namespace guard
