// SessionTree: a git tree holding a session's state of the paths it
// touched, written over another tree (the parent checkpoint's, or HEAD's).
// Only the touched paths are read (streamed from the store in pieces, and
// not at all when their git id is known: stored_blob.h) and only the trees
// above them are rewritten (git_tree_create_updated), so the cost follows the size of the
// change, not of the repository; the content comes from guard's blob store,
// never from the work tree, so it works for a session that has died and
// whose tree has moved on since.
//
// What a git tree cannot hold is left as the base has it: an empty
// directory, a fifo or device node (dropped, like git does), and a path
// whose state the session has not saved yet (counted in `unknown`).
//
// Submodules: a path below a gitlink of the base (a submodule) belongs to
// the submodule's own history and is left out (listed in `in_submodule`);
// the gitlink itself records what `git commit -a` would, the base's commit
// unless the submodule's HEAD moved, then that.
//
// Ignored files (TreeOptions::leave_out_ignored, `guard commit`): a path
// the base does not hold, that git's index does not track and that git
// ignores is left out (listed in `ignored`), as `git add` of it would.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/index_oids.h"
#include "supervisor/git/stored_blob.h"
#include "supervisor/git/work_tree_repo.h"
#include "supervisor/review/session_changes.h"

namespace guard {

// One path of the tree that differs from the base.
struct TreeChange {
  std::string path;      // repository path
  char kind;             // 'A' added, 'M' changed (content or mode), 'D' removed
  bool was_tree = false; // 'D' of a directory: everything below it goes
};

struct TreeOptions {
  // Blob ids git's index proves for a state (may be null), taken instead of
  // reading and hashing its content, when the repository has that blob.
  const IndexOids* index = nullptr;
  // The session's cache of the git ids of its store blobs (may be null):
  // a blob it names is not read; the ids computed are added to it.
  BlobIdCache* ids = nullptr;
  bool leave_out_ignored = false;
};

struct SessionTree {
  git_oid tree{};
  size_t written = 0;      // paths given content (added or changed)
  size_t removed = 0;      // paths removed from the base
  size_t unknown = 0;      // touched paths whose state is not known: kept as in the base
  size_t excluded = 0;     // inside .git or guard's state: never in a tree
  std::vector<std::string> in_submodule;  // repository paths below a submodule: left out
  std::vector<std::string> ignored;       // untracked ignored paths left out (leave_out_ignored)
  std::vector<TreeChange> changes;  // sorted by path
  // Every object this tree needs that the base tree did not: the blobs
  // written and the trees above each changed path, the new root tree last.
  std::vector<git_oid> new_objects;
  // The blobs among new_objects whose content is in the store, never put
  // in memory: ObjectPack::Write streams them from there.
  std::vector<StoredBlob> stored;

  // Builds the tree of `changes` (their `after` states) over `base` (null:
  // the empty tree). The objects go to the repository's object database
  // (an ObjectPack's, while one is attached).
  static Status Build(const WorkTreeRepo& repo, const git_tree* base, const SessionChanges& changes,
                      const BlobStore& store, SessionTree* out, const TreeOptions& options = {});
};

}  // namespace guard
