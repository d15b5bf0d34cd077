// BaselineObjects: watch mode's baseline by git object id. In a git work
// tree the content of every clean tracked file is already in the
// repository, as the blob its index entry names: the baseline records that
// id instead of copying the file (supervisor/watch/watched_tree.h,
// KeptContent), and copies the blob into guard's store only when the file
// first changes, the moment its content is needed as a pre-image.
//
// "Clean" is what IndexOids proves (index_oids.h): the file's lstat is the
// index entry's to the nanosecond, the entry is not racily clean nor marked,
// the blob has the file's size and no filter applies to the path. Anything
// else is copied as before.
//
// Pinning. An agent's `git gc --prune=now` (or a `git reset` and a gc)
// could remove a blob nothing else names. Before the command runs, Pin
// writes one commit whose tree lists every id used (a flat tree: entry
// "<40 hex>" -> that blob) and points refs/guard-baseline/<session-id> at
// it; Unpin deletes the ref at the session's end, when every pre-image the
// session needed is in guard's store. A session that died keeps its ref
// (docs/format.md, "Watch mode's baseline").
#pragma once

#include <memory>
#include <string>
#include <unordered_set>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/index_oids.h"
#include "supervisor/git/work_tree_repo.h"

namespace guard {

// "refs/guard-baseline/<id>": apart from the checkpoints' refs/guard/, so
// that `git push REMOTE 'refs/guard/*'` never sends it.
std::string BaselineRef(const std::string& session_id);

class BaselineObjects {
 public:
  // The repository around `root` (absolute, canonical) and its index.
  // kNotFound when the root is in no git work tree.
  static Status Open(const std::string& root, const std::string& state_dir, const std::string& session_id,
                     std::unique_ptr<BaselineObjects>* out);

  // Whether a .gitattributes lies under the root. With none there, none
  // between the work tree's top and the root, no info/attributes, no
  // user's or system's attribute file and no line-ending configuration, no
  // filter can apply to any path, and Find skips its per-path lookups.
  void AttributeFilesUnderRoot(bool any);
  // The blob id (40 hex) of regular file `rel` (root-relative) read as `st`
  // (with its stat signature), when the index proves its content.
  bool Find(const std::string& rel, const FileState& st, std::string* id);
  // Copies blob `id` into `store`, checking it hashes to its id.
  Status Fetch(const std::string& id, BlobStore* store, BlobKey* key, uint64_t* size);
  // Points the baseline ref at a commit naming every id Find returned.
  Status Pin();
  // Deletes the ref (nothing when Pin wrote none).
  Status Unpin();

  size_t found() const { return used_.size(); }

 private:
  BaselineObjects() = default;
  WorkTreeRepo repo_;
  IndexOids index_;
  std::string ref_;
  std::unordered_set<std::string> used_;  // ids Find returned
  bool pinned_ = false;
};

}  // namespace guard
