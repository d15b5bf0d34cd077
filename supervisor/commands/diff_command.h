// `guard diff [--session ID] [--to SEQ|MARK] [--color=auto|always|never]
// [--stat|--name-only] [--no-pager] [PATH...]`:
// what the session changed, as a unified diff with git headers, from the
// state before the session to its end (or to just after operation SEQ, or to
// mark MARK).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/review/review_options.h"

namespace guard {

class DiffCommand {
 public:
  struct Options {
    std::string session;             // "" = last session of the root
    std::string root;                // --root; "": the one around the current directory
    std::string to;                  // --to: SEQ or MARK (ResolveReviewTo); "": the end
    std::vector<std::string> paths;  // restrict to these (relative to the current directory)
    std::string color = "auto";
    bool stat = false;               // --stat: per-file counts of changed lines, as git diff --stat
    bool name_only = false;          // --name-only: the changed paths alone
    bool no_pager = false;           // --no-pager (supervisor/base/pager.h)
  };
  // One line for guard --help; the rest for guard diff --help.
  static const char* const kSummary;
  static const char* const kHelp;

  explicit DiffCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
