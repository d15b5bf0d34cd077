// SessionCommit: `guard commit`, an ordinary commit on the current branch
// holding exactly the session's end state of the paths it touched (or of
// some of them), and nothing of the user's other work: the tree is HEAD's
// plus those paths (not the index's, so other staged changes stay staged
// and out of the commit), and afterwards the index entries of exactly those
// paths are updated.
//
// Planned first, applied after the user agreed: Plan builds the tree in
// memory (object_pack.h) and compares each path it would commit with the
// work tree; a path whose content there is not the session's end state is
// a conflict (someone changed it since), and Apply is refused, as undo
// refuses. Nothing is written to the repository before Apply.
#pragma once

#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/session_history.h"
#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/object_pack.h"
#include "supervisor/git/session_tree.h"
#include "supervisor/git/work_tree_repo.h"

namespace guard {

class SessionCommit {
 public:
  // `only`: root-relative paths (empty: all the session touched).
  // `include_ignored`: also the untracked paths git ignores, which `git add`
  // (and by default this) leaves out.
  static Status Plan(const SessionHistory& history, const BlobStore& store, const std::string& state_dir,
                     const std::vector<std::string>& only, bool include_ignored, SessionCommit* out);

  const std::vector<TreeChange>& changes() const { return tree_.changes; }
  // "PATH: why", one per path whose work-tree state is not the session's end.
  const std::vector<std::string>& conflicts() const { return conflicts_; }
  size_t unknown() const { return tree_.unknown; }
  // Repository paths left out: ignored and untracked; inside a submodule.
  const std::vector<std::string>& ignored() const { return tree_.ignored; }
  const std::vector<std::string>& in_submodule() const { return tree_.in_submodule; }
  // The branch the commit goes on ("refs/heads/main"), or "HEAD" when detached.
  const std::string& target() const { return target_; }

  // Writes the commit, moves the branch (only if it still names the commit
  // planned on) and updates the index entries of the committed paths.
  Status Apply(const std::string& message, std::string* commit_hex);

 private:
  Status CheckWorkTree(const std::string& path, const FileState& end, const git_tree* tree);

  const BlobStore* store_ = nullptr;
  std::string root_, state_dir_;
  WorkTreeRepo repo_;
  ObjectPack pack_;
  bool has_head_ = false;
  git_oid head_{};
  std::string target_;
  SessionTree tree_;
  std::vector<std::string> conflicts_;
};

}  // namespace guard
