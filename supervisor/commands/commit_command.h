// `guard commit [--session ID] [-m MESSAGE] [--yes] [PATH...]`: an ordinary
// commit on the current branch of exactly the session's end state of the
// paths it touched (supervisor/git/session_commit.h): shown, asked about,
// refused when one of them changed since the session.
#pragma once

#include <string>
#include <vector>

namespace guard {

class CommitCommand {
 public:
  struct Options {
    std::string session;             // "" = last session of the root
    std::string root;                // --root
    std::string message;             // -m; "": a summary of the session
    bool yes = false;                // do not ask
    bool dry_run = false;            // only show
    bool include_ignored = false;    // --include-ignored: also what git ignores
    std::vector<std::string> paths;  // only these (relative to the current directory)
  };
  static const char* const kSummary;
  static const char* const kHelp;

  explicit CommitCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
