// `guard __complete sessions`: what the shell completions (packaging/
// completions/) offer after --session: the ids of the current root's
// sessions, newest first, then last and last~1.. for them. Hidden; fast (no
// recovery, no journal read) and silent on errors, since a completion must
// never print into the user's command line.
#pragma once

#include <string>

namespace guard {

class CompleteCommand {
 public:
  explicit CompleteCommand(std::string what) : what_(std::move(what)) {}
  int Run();

 private:
  std::string what_;
};

}  // namespace guard
