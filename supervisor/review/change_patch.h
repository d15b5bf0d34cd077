// ChangePatch: a review's changes as a git diff. The touched paths are
// materialized before and after (ChangeTrees, .git contents left out), each
// tree is recorded in a scratch repository (GitTreeDiff), and the diff
// between the two is what `guard diff` prints and `guard export` writes.
#pragma once

#include <functional>
#include <string>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/review/change_trees.h"
#include "supervisor/review/git_tree_diff.h"
#include "supervisor/review/session_changes.h"

namespace guard {

class ChangePatch {
 public:
  // `scratch` is an empty private directory the caller removes afterwards.
  static Status Prepare(const SessionChanges& changes, const BlobStore* store, const std::string& scratch,
                        const std::string& after_label, ChangePatch* out,
                        const std::function<void(size_t, size_t)>& progress = {});

  // What could not be put in the trees (see ChangeTrees).
  const ChangeTrees& trees() const { return trees_; }
  // Writes the diff to `out_fd`; nothing when nothing differs.
  Status Write(GitTreeDiff::Style style, int out_fd);

 private:
  ChangeTrees trees_;
  GitTreeDiff git_;
  std::string before_tree_;
  std::string after_tree_;
};

}  // namespace guard
