// CallObserver: what Capture tells the layer above it of each recorded call
// under the root, so that the session's work saver (supervisor/session/
// work_saver.h) knows which post-images a call supersedes. The capture core
// depends on this interface only, never on the saver.
#pragma once

#include <string>
#include <vector>

namespace guard {

// The root-relative paths a recorded call may change.
struct ChangedPaths {
  std::vector<std::string> changed, removed, left, arrived;
  bool empty() const { return changed.empty() && removed.empty() && left.empty() && arrived.empty(); }
};

class CallObserver {
 public:
  virtual ~CallObserver() = default;
  // Before the call's records are appended: no post-image read while the
  // call runs may be appended after them.
  virtual void CallBegins(const ChangedPaths& call) = 0;
  // Its result is known. `happened`: the call succeeded, or its outcome is
  // unknown (the thread died inside it).
  virtual void CallEnds(const ChangedPaths& call, bool happened) = 0;
};

}  // namespace guard
