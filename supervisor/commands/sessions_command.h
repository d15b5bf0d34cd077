// `guard sessions [--json] [--all]`: the sessions of the current root (of
// every root with --all), oldest first.
#pragma once

#include <string>

namespace guard {

class SessionsCommand {
 public:
  struct Options {
    bool json = false;
    bool all = false;
    std::string root;  // --root; "": the one around the current directory
    std::string color = "auto";  // --color: auto, always, never
  };
  explicit SessionsCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
