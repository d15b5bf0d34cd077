// `guard status [--json]`: for the current root, the sessions running now,
// the last session (its counts and how it ended), and the sessions whose
// supervisor died without sealing them (to be sealed by `guard recover`).
#pragma once

#include <string>
#include <cstdint>

namespace guard {

class StatusCommand {
 public:
  struct Options {
    bool json = false;
    std::string root;  // --root; "": the one around the current directory
    std::string color = "auto";  // --color: auto, always, never
    // The retention policy the store's total is shown against.
    int64_t keep_ns = 0;
    uint64_t max_bytes = 0;
  };
  // One line for guard --help; the rest for guard status --help.
  static const char* const kSummary;
  static const char* const kHelp;

  explicit StatusCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
