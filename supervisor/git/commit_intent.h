// CommitIntent: the small journal that lets `guard commit` move a branch
// and the index together although git cannot. A commit is made in this
// order (session_commit.cc):
//
//   1. the new index is written to a file of its own in the git directory
//      (guard-index-XXXXXX), from the index as it stands;
//   2. this intent is recorded in guard's state directory, durable:
//      the repository, the ref, its old and new commit, that file's inode;
//   3. index.lock is taken by hard-linking that file to it (git's own lock:
//      it fails if any git process holds the index);
//   4. the ref moves from old to new (only if it still names old);
//   5. index.lock is renamed onto the index (git's own commit of an index);
//   6. the intent is removed.
//
// A failure at 3 or 4 undoes what was done; a failure at 5 moves the ref
// back. A kill anywhere leaves the intent, and Repair (run by the next
// `guard commit` and by `guard recover`) finishes or rolls back:
//   - the index is the prepared file (its inode): finished, nothing to do;
//   - the ref names new and index.lock is the prepared file: rename it onto
//     the index (finish);
//   - the ref names new but the prepared index is gone: move the ref back to
//     old (the commit is not there at all);
//   - else (the ref never moved, or moved on since): leave the ref, remove
//     index.lock if it is the prepared file.
// and then removes the prepared file and the intent. Either way `git
// status` afterwards shows the branch and the index agreeing.
//
// The committing process holds an exclusive flock(2) on the intent from
// before its first byte until it removes it: Repair skips an intent that is
// locked (a commit in progress) and mends only those whose writer died.
//
// The file is text, one `key=value` a line after a first line
// "guard commit intent 1" (docs/format.md, "Commit intents").
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

struct CommitIntent {
  std::string git_dir;      // absolute, with its trailing slash
  std::string ref;          // "refs/heads/main", or "HEAD" when detached
  std::string old_commit;   // 40 hex digits, "" when the branch was unborn
  std::string new_commit;   // 40 hex digits
  std::string index_file;   // the prepared index (absolute path)
  ino_t index_ino = 0;      // its inode

  // state_dir/git-commits/<name>.intent, one per repository.
  static std::string PathFor(const std::string& state_dir, const std::string& git_dir);
  // Creates the intent at `path` (kAlreadyExists-like kInvalidArgument when
  // one is there: another commit of this repository is in progress or needs
  // repair), durable, and keeps it locked through `held` until the caller
  // removes it (Remove) or dies.
  Status Record(const std::string& path, UniqueFd* held) const;
  static Status Remove(const std::string& path, UniqueFd* held);
  static Status Read(const std::string& path, CommitIntent* out);
};

// Finishes or rolls back every commit an intent in `state_dir` records (see
// above), removing the intents. `done`: one line per repaired commit, for
// the user ("finished the commit ... on main" / "rolled back ...").
Status RepairCommits(const std::string& state_dir, std::vector<std::string>* done);

// Finishes or rolls back the one commit `intent` (at `path`) records.
Status RepairCommit(const CommitIntent& intent, const std::string& path, std::string* done);

}  // namespace guard
