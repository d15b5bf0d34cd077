// IndexOids: git's own index as a cache of blob ids for states guard
// recorded. A checkpoint needs the git blob id of every touched path's
// content; computing it means reading the content from guard's store and
// hashing it, which for a `git checkout` of thousands of files was most of
// the end checkpoint's time (docs/performance.md). git already knows the id
// of every file it wrote: its index holds, per path, the id and the stat
// data the file had then. A recorded state whose stat signature (the
// lstat guard read it with: size, mtime and ctime to the nanosecond, inode,
// device, mode) is the index entry's is the very file git hashed, so its id
// is the entry's: the rule `git status` and `git commit -a` use to skip
// files, with git's own protection against "racily clean" entries (an
// entry whose mtime or ctime is not older than the index file itself may
// have changed within the same clock tick, and is not used).
//
// The index names the blob git stored, which is the file's bytes after
// git's clean filters (line endings under `eol`/`autocrlf`, `ident`, LFS
// and other filter drivers): a path any filter applies to is hashed, and so
// is every file whose blob does not have the recorded size. Nothing else is
// taken on trust beyond what git itself trusts: a state without a
// signature (a pre-image), any field that differs, a symlink, an empty
// file, an entry git marked as not to be trusted (size 0: "smudged";
// assume-unchanged, skip-worktree, intent-to-add), a conflicted path or an
// index that changed while it was read, and the content is hashed from the
// store as before. docs/security.md says what is left: a process of the
// session that forges the index, or that rewrites a file between git's
// write of it and git's stat, can make a checkpoint name another blob for
// that file (never touching the undo log).
#pragma once

#include <cstddef>
#include <string>

#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/work_tree_repo.h"

namespace guard {

class IndexOids {
 public:
  // Reads the work tree's index. Never fails: without a usable index
  // (none, unreadable, rewritten while it was read) Find finds nothing.
  static IndexOids Load(const WorkTreeRepo& repo);

  // The blob id of `st` at repository path `path` if the index proves it
  // (and the repository has that blob, of `st`'s size).
  bool Find(const std::string& path, const FileState& st, git_oid* out) const;

  size_t used() const { return used_; }

  // The caller knows that no attributes apply anywhere in the repository
  // (no attribute file, no line-ending configuration: BaselineObjects
  // checks): Find then skips its per-path filter and attribute lookups,
  // which cost more than reading a small file (docs/performance.md). The
  // blob's size must still be the file's.
  void AssumeNoFilters() { no_filters_ = true; }

 private:
  git_repository* repo_ = nullptr;  // the WorkTreeRepo's: it outlives this
  GitOdb odb_;
  GitIndex index_;
  int64_t stamp_ns_ = 0;  // the index file's mtime when read
  mutable size_t used_ = 0;
  bool no_filters_ = false;
};

}  // namespace guard
