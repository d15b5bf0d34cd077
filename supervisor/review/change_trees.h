// ChangeTrees: the two moments a review compares, written out as directory
// trees under a scratch directory: before/ (before the session) and after/
// (just after the chosen operation), each holding the touched paths only.
//
// A path whose state is not known at one moment (never recorded, content not
// captured, blob missing or damaged) is left out of both trees, so that it
// shows no change rather than a false one, and is reported in unknown().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/review/session_changes.h"

namespace guard {

class ChangeTrees {
 public:
  struct Options {
    bool before = true;                      // write before/ too (the tar export needs after/ only)
    bool skip_git_dirs = false;              // leave out paths inside .git (git cannot track them)
    bool for_git = false;                    // owner can read everything; directory modes not applied
    std::string after_label = "at the end";  // names the later moment in unknown()
    // Called as files are written: done and total (both trees count).
    std::function<void(size_t, size_t)> progress;
  };
  static Status Build(const SessionChanges& changes, const BlobStore* store, const std::string& scratch,
                      Options options, ChangeTrees* out);

  std::string before_dir() const { return scratch_ + "/before"; }
  std::string after_dir() const { return scratch_ + "/after"; }
  // Paths present in after/ (the root "." excepted), parents first.
  const std::vector<std::string>& after_paths() const { return after_paths_; }
  // One line per path whose state is unknown at either moment: "PATH: why".
  const std::vector<std::string>& unknown() const { return unknown_; }
  // One line per path not representable here (fifo, socket, device node).
  const std::vector<std::string>& skipped() const { return skipped_; }
  // Paths inside .git directories left out (skip_git_dirs).
  size_t git_dir_paths() const { return git_dir_paths_; }
  // Of those, the user's own files (hooks, config, info/exclude:
  // GitDirPathIsUsers), as against git's bookkeeping of commits and staging.
  const std::vector<std::string>& git_dir_users() const { return git_dir_users_; }

 private:
  std::string scratch_;
  std::vector<std::string> after_paths_;
  std::vector<std::string> unknown_;
  std::vector<std::string> skipped_;
  size_t git_dir_paths_ = 0;
  std::vector<std::string> git_dir_users_;
};

}  // namespace guard
