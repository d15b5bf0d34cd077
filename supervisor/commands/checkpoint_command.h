// `guard checkpoint [--session ID] [--at MARK] [-m MESSAGE]`: a commit of the session's
// current state on refs/guard/<session-id> in the git repository around
// its root (supervisor/git/checkpoint.h), for a running session (its work
// saved so far) or one that has ended or died (its end, after recovery).
#pragma once

#include <string>

namespace guard {

class CheckpointCommand {
 public:
  struct Options {
    std::string session;  // "" = last session of the root
    std::string root;     // --root; "": the one around the current directory
    std::string message;  // -m; "": a summary of the session
    std::string at;       // --at MARK: the state at that mark; "": as the journal stands
  };
  static const char* const kSummary;
  static const char* const kHelp;

  explicit CheckpointCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

// Writes the automatic checkpoint of session `id` (at its end, or after
// its recovery) when its root is in a git work tree: nothing when it is
// not, one line on stderr unless `quiet` when it fails. Never fails the
// caller.
void WriteEndCheckpoint(const std::string& id, bool quiet);

}  // namespace guard
