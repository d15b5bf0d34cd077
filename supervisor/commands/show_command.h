// `guard show [--session ID] [--json]`: a session's timeline, one line (or
// one JSON object) per operation record, failed calls included.
#pragma once

#include <string>

namespace guard {

class ShowCommand {
 public:
  struct Options {
    std::string session;  // "" = last session of the root
    std::string root;     // --root; "": the one around the current directory
    bool json = false;
    bool no_pager = false;  // --no-pager (supervisor/base/pager.h)
    std::string color = "auto";  // --color: auto, always, never
  };
  // One line for guard --help; the rest for guard show --help.
  static const char* const kSummary;
  static const char* const kHelp;

  explicit ShowCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
