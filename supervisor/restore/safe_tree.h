// SafeTree: changes files only beneath one root directory, whatever the
// paths it is given say. Every path is root-relative and plain
// (IsPlainRelative: absolute paths, `..`, empty components and NUL bytes are
// refused), and parent directories are opened one component at a time from
// the root with O_NOFOLLOW (OpenDirBeneath, supervisor/base/tree_walk.h), so
// a parent that has become a symlink (to /etc, say) is refused instead of
// followed.
// The final component is acted on with *at() calls that do not follow it.
//
// A restore runs untraced and records itself (restore_session.h): every
// change is told to a MutationSink before it is made, as the tracer would
// tell it of the same call, and its result after.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/capture/mutation.h"

namespace guard {

class SafeTree {
 public:
  static Status Open(const std::string& root, SafeTree* out);
  // A tree whose root does not exist (a session removed it): every path in
  // it is absent, and nothing can be changed in it. An undo plans against
  // it, then makes the root and opens it.
  static void OpenAbsent(const std::string& root, SafeTree* out);
  // Of an absent tree: makes the root (mode `mode`) and opens it.
  Status MakeRoot(uint32_t mode);

  // Every change is told to `sink` (null: none) before it is made, and not
  // made when the sink refuses it (its pre-image could not be saved).
  void SetSink(MutationSink* sink);
  // Called before SyncStaged and SyncDirs make changes durable: the sink's
  // records of them must be durable first (restore_session.h).
  void SetBeforeSync(std::function<Status()> hook) { before_sync_ = std::move(hook); }

  // lstat of `rel`; an absent path gives kAbsent with ok status. A path below
  // a symlink is refused (kInvalidArgument), as for every other operation.
  Status Stat(const std::string& rel, FileState* out, struct stat* st = nullptr) const;
  // The names in directory `rel` (a symlink is refused, not followed).
  Status List(const std::string& rel, std::vector<std::string>* names) const;
  // The XXH3-128 of the content of regular file `rel`.
  Status HashFile(const std::string& rel, BlobKey* key) const;

  // Writing a file takes two steps, so that many files can share one sync:
  // StageFile writes the content of `blob` to a temporary file beside `rel`
  // (mode `mode`), SyncStaged makes staged files durable (one syncfs of each
  // filesystem they are on), and CommitStaged renames one over `rel`, which is
  // therefore never partial nor, after a crash, empty. DropStaged removes a
  // staged file that will not be committed.
  struct Staged {
    std::string rel;
    std::string tmp;  // name in rel's directory
    dev_t dev = 0;    // of that directory
    // What was written: type, mode, size, mtime, dev, ino and the blob.
    FileState written;
  };
  Status StageFile(const std::string& rel, const BlobStore& store, const BlobRef& blob, uint32_t mode,
                   Staged* out);
  // Writes the content of `blob` straight to `rel`, which must be absent
  // (O_EXCL: EEXIST when it is not): no staged name, no rename, when there
  // is nothing at `rel` to protect. Made durable by SyncDirs. A restore cut
  // short may leave it short or, after a power loss, empty: the same
  // restore run again writes it again (RestoreRequest::unfinished_since_ns).
  Status WriteNewFile(const std::string& rel, const BlobStore& store, const BlobRef& blob, uint32_t mode);
  Status SyncStaged(const std::vector<Staged>& staged);
  Status CommitStaged(const Staged& staged);
  void DropStaged(const Staged& staged);
  Status MakeDir(const std::string& rel, uint32_t mode);
  Status MakeSymlink(const std::string& rel, const std::string& target);
  Status MakeFifo(const std::string& rel, uint32_t mode);
  // Removes a file, symlink or empty directory.
  Status Remove(const std::string& rel);
  // chmod without following a final symlink (symlinks have no mode to set).
  Status Chmod(const std::string& rel, uint32_t mode);

  // Makes every directory changed so far, and every file written in place
  // (WriteNewFile), durable (one syncfs of each filesystem they are on).
  Status SyncDirs();

  // The root, absolute (for reading, never writing: git_state_plan.cc).
  const std::string& root() const { return root_; }
  // Drops what the tree remembers of directories (the open parent, the
  // absent one): for a caller about to act on a tree that others may have
  // changed since it last looked.
  void Refresh() const;

  // The files committed so far: path -> Staged::written.
  const std::map<std::string, FileState>& written() const { return written_; }

 private:
  // The directory holding `rel` (*dir, borrowed: valid until the next call)
  // and the name in it.
  Status OpenParent(const std::string& rel, int* dir, std::string* name) const;
  void Touched(const std::string& rel);
  // Creates `name` in `dir` (O_EXCL) with the content of `blob` and mode
  // `mode`, announced as `rel`'s directory entry `name`; fills `out` but its
  // tmp.
  Status WriteNew(int dir, const std::string& name, const std::string& rel, const BlobStore& store,
                  const BlobRef& blob, uint32_t mode, Staged* out);
  // Tells the sink of the change `req` to `rel` (and `rel2`, "" for none)
  // about to be made; an error when it refuses it.
  // `known` (`known2`): the lstat of rel (rel2) the tree just made through
  // its parent's fd, handed to the sink so that it makes no other (one
  // lookup of the name instead of a walk of the absolute path).
  Status Announce(MutationRequest req, const std::string& rel, const std::string& rel2 = "",
                  const KnownLstat& known = KnownLstat(), const KnownLstat& known2 = KnownLstat());
  // fstatat of `name` in `dir` as a KnownLstat.
  static KnownLstat LstatAt(int dir, const std::string& name);
  // Forgets the parents known absent (a change may have made one).
  void ForgetMissing() const { missing_parent_.clear(); }
  // The change announced last returned `rc` (-1: failed with errno).
  void Finish(int rc);

  std::string root_;
  UniqueFd root_fd_;
  bool absent_ = false;
  std::set<std::string> dirty_dirs_;  // parents (relative, "" = root) changed
  MutationSink* sink_ = nullptr;
  std::function<Status()> before_sync_;
  pid_t tid_ = 0;     // the thread that tells the sink (set with it)
  // The process's umask, read at the first file or directory made (a
  // restore sets it before): -1 until then.
  mutable int umask_ = -1;
  mode_t Umask() const;
  std::map<std::string, FileState> written_;
  // The last parent opened (restores go through the tree in path order, so
  // the next path is mostly in the same directory): forgotten when a
  // directory is removed, since a new one may take its name.
  mutable std::string cached_parent_;
  mutable UniqueFd cached_fd_;
  mutable dev_t cached_dev_ = 0;  // of cached_fd_ (0: not read yet)
  // The last parent found absent (the undo of an `rm -rf` asks about every
  // path below a removed directory): absent until the tree changes.
  mutable std::string missing_parent_;
  mutable int missing_errno_ = 0;
  pid_t pid_ = 0;  // for the staged names
  std::minstd_rand names_;  // their random part (O_EXCL refuses a name taken)
  bool names_seeded_ = false;
  // The device of directory `dir` (root_fd_ or cached_fd_).
  Status DevOf(int dir, dev_t* dev) const;
};

}  // namespace guard
