// `guard recover`: completes every session whose supervisor died (see
// recovery.h), or only those of one root (--root). Other commands run the
// same recovery for their root first.
#pragma once

#include <string>

namespace guard {

class RecoverCommand {
 public:
  explicit RecoverCommand(std::string root = "") : root_(std::move(root)) {}
  int Run();

 private:
  std::string root_;  // --root; "": every root
};

}  // namespace guard
