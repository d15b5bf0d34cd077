// WorkTreeRepo: the git repository whose work tree holds a session's root,
// and the names guard uses for it: the root's place in the work tree, and
// the paths a session may have touched that never go into a git tree (the
// repository's own .git, guard's state directory when it lies inside).
#pragma once

#include <string>

#include "common/status.h"
#include "supervisor/git/git_handles.h"

namespace guard {

class WorkTreeRepo {
 public:
  // Opens the repository whose work tree contains `root` (absolute,
  // canonical), searching upwards as git does. kNotFound when there is none
  // (or it is bare). `state_dir`: guard's state directory, canonical.
  static Status Open(const std::string& root, const std::string& state_dir, WorkTreeRepo* out);

  git_repository* get() const { return repo_.get(); }
  const std::string& work_tree() const { return work_tree_; }  // canonical, no trailing slash

  // The repository path ("dir/file") of root-relative `rel`, or false when
  // it must stay out of every commit guard writes: a name inside a .git
  // directory (this repository's, a nested one's) or inside guard's state.
  bool RepoPath(const std::string& rel, std::string* out) const;

  // The commit HEAD names, or kNotFound when HEAD is unborn.
  Status HeadCommit(git_oid* out) const;

 private:
  GitRepository repo_;
  std::string work_tree_;
  std::string root_prefix_;   // "" or "sub/dir/": the root inside the work tree
  std::string state_prefix_;  // "" or "path/of/GUARD_HOME": inside the work tree
};

}  // namespace guard
