// Runs a process on a pseudo-terminal (stdin, stdout and stderr all the
// pty's slave, as in an interactive shell), for the behaviour guard shows
// only on a terminal: the pager, summarised plans, progress, the prompt.
#pragma once

#include <string>

#include "tests/e2e/support/guard_runner.h"

namespace guard::e2e {

struct PtyResult {
  int exit_code = -1;  // or 128+N for death by signal N
  bool timed_out = false;
  std::string out;  // everything written to the terminal, \r\n as the tty wrote it
};

// `spec.stdin_data`, if any, is typed into the terminal at the start.
// `rows` sets the window's height (a screenful).
PtyResult RunOnPty(const ProcessSpec& spec, int rows = 24);

}  // namespace guard::e2e
