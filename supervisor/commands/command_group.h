// CommandGroup: a session's command run without a tracer or a subreaper
// (watch mode on macOS: watch_launch.h). The command is the first process
// of a process group of its own, which is what marks the session's
// processes for the keeper (session/session_keeper.h) and for the signals
// guard passes on; while it runs, that group is the terminal's foreground
// group when guard's was, so that Ctrl-C and Ctrl-Z reach it as they would
// without guard.
//
// POSIX only (fork, setpgid, tcsetpgrp, execve, waitpid, killpg): built
// on both platforms, tested on Linux through LaunchWatchSession
// (tests/e2e/watch_launch_test.cc).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class CommandGroup {
 public:
  CommandGroup() = default;
  // Gives the terminal back to guard's group if the command still had it.
  ~CommandGroup();
  CommandGroup(const CommandGroup&) = delete;
  CommandGroup& operator=(const CommandGroup&) = delete;

  // Finds argv[0] on PATH (as execvp would) and makes the process that will
  // run it, in a group of its own, held before its exec until Go(): the
  // keeper is told of it first. kNotFound when there is no such program.
  // `env`: NAME=value entries that replace or add to guard's environment.
  Status Start(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  // Lets it exec; the exec's errno when that failed (the process reaped).
  Status Go();
  pid_t pid() const { return pid_; }

  // Waits until the command has ended and then until no process of its
  // group is left; *status: the command's wait status. guard's SIGINT,
  // SIGTERM, SIGHUP and SIGQUIT go to the group meanwhile; a stop of the
  // command (Ctrl-Z) stops guard alike, and guard's continuing continues it.
  Status Wait(int* status);

 private:
  void TakeTerminalBack();

  pid_t pid_ = -1;
  bool foreground_ = false;  // the command's group holds the terminal guard's held
  UniqueFd go_, result_;     // Go()'s byte to the child; its exec's errno back
};

// Where execvp would find `name`: itself when it holds a '/', else the
// first executable regular file of that name in `path` (PATH's value).
// kNotFound if none.
Status FindOnPath(const std::string& name, const std::string& path, std::string* out);

}  // namespace guard
