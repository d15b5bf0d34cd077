// `guard sessions [--json] [--all]`: the sessions of the current root (of
// every root with --all), oldest first.
#pragma once

namespace guard {

class SessionsCommand {
 public:
  struct Options {
    bool json = false;
    bool all = false;
  };
  explicit SessionsCommand(Options options) : options_(options) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
