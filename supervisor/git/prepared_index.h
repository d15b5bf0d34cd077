// PreparedIndex: the index `guard commit` installs, written in full beside
// the real one before anything moves (commit_intent.h says in what order it
// is put in place). It is the index as it stands with exactly the committed
// paths changed: each path's entry takes the commit's blob and mode and the
// stat data of the work-tree file (which the plan proved holds that
// content), a removed path's entry (or a removed directory's entries) go.
//
// Reading the index up front is also the check that guard can write it at
// all: an index libgit2 cannot read (a split index, git update-index
// --split-index: the mandatory `link` extension, which libgit2 1.5 does not
// support; a sparse index) is refused here, with what to do, before the
// branch moves.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/session_tree.h"

namespace guard {

class PreparedIndex {
 public:
  PreparedIndex() = default;
  ~PreparedIndex();  // removes the file unless Release()d
  PreparedIndex(const PreparedIndex&) = delete;
  PreparedIndex& operator=(const PreparedIndex&) = delete;

  // Writes the index of `repo` (whose work tree is `work_tree`) with
  // `changes` applied as they stand in `tree` to <git dir>/guard-index-XXXXXX.
  // kInvalidArgument, with the remedy in its message, for an index
  // libgit2 cannot read or an index.lock that is there.
  static Status Prepare(git_repository* repo, const std::string& work_tree, const git_tree* tree,
                        const std::vector<TreeChange>& changes, PreparedIndex* out);

  const std::string& path() const { return path_; }
  ino_t ino() const { return ino_; }
  const std::string& index_path() const { return index_path_; }
  // Whether the real index is still the file it was prepared from.
  bool IndexUnchanged() const;
  // The file is now the caller's (installed, or named by a commit intent).
  void Release() { path_.clear(); }

 private:
  std::string path_, index_path_;
  ino_t ino_ = 0;
  bool had_index_ = false;
  struct stat index_st_ {};
};

}  // namespace guard
