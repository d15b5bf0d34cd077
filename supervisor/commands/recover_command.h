// `guard recover`: completes every session whose supervisor died (see
// recovery.h). Other commands run the same recovery for their root first.
#pragma once

#include <string>

namespace guard {

class RecoverCommand {
 public:
  int Run();
};

}  // namespace guard
