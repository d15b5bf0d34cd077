// `guard undo` and `guard replay`: put the paths a session touched back as
// they were before it (or before operation SEQ), or forward as it left them
// (or just after SEQ). The change itself runs under guard as a new session,
// so an undo can be undone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/restore/restore.h"

namespace guard {

class RestoreCommand {
 public:
  struct Options {
    RestoreDirection direction = RestoreDirection::kUndo;
    std::string session;  // "" = last session of the root
    std::string root;     // --root; "": the one around the current directory
    uint64_t to_seq = 0;
    bool dry_run = false;
    bool yes = false;
    bool force = false;
    std::vector<std::string> paths;  // as given, relative to the current directory
    bool internal = false;           // `guard __restore`: apply now, under the outer guard
  };
  explicit RestoreCommand(Options options) : options_(std::move(options)) {}
  int Run();

 private:
  Options options_;
};

}  // namespace guard
