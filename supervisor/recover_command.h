// `guard recover`: completes every session whose supervisor died (see
// recovery.h). Other commands run the same recovery for their root first.
#pragma once

#include <string>

namespace guard {

class RecoverCommand {
 public:
  int Run();
};

// Recovers the orphaned sessions of `root` before another command reads
// them, printing one line per recovered session unless `quiet`. Does
// nothing inside a guard session (the outer guard owns the state directory).
void RecoverBeforeCommand(const std::string& root, bool quiet);

}  // namespace guard
