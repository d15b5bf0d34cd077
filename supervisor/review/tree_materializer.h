// TreeMaterializer: writes recorded file states out as a real directory tree
// (content from the blob store, modes, symlinks, directories, mtimes), so
// that git can compare two moments of a session and tar can archive one.
//
// The tree is private to the caller (a fresh temporary directory), but the
// paths come from a journal: every component is opened with O_NOFOLLOW, so a
// symlink written earlier can never redirect a later write outside the tree,
// and names with "..", "." or empty components are refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace guard {

class TreeMaterializer {
 public:
  struct Options {
    // Adds owner read and write (and search, for directories) to every mode,
    // so that another program can read the whole tree even when it is not
    // run by root. For git, which keeps only the owner's execute bit.
    bool owner_can_read = false;
  };
  // `dir` must be an existing directory. `store` must outlive this object.
  static Status Open(const std::string& dir, const BlobStore* store, Options options, TreeMaterializer* out);

  // Makes root-relative `path` hold `state`. kAbsent writes nothing, nor does
  // the path "." (the tree itself, whose mode is the caller's to report). Missing
  // parents are created (0755). Errors, after which nothing is left at path:
  //   kNotFound / kCorruption  the content is not recorded, missing or damaged
  //   kUnsupported             fifo, socket, device or unknown type
  //   kInvalidArgument         a bad name, or a parent that is not a directory here
  Status Put(const std::string& path, const FileState& state);
  // Removes a file or symlink Put left at `path`; a directory is kept.
  Status Remove(const std::string& path);
  // Gives the directories Put created their recorded modes and mtimes,
  // deepest first (a read-only directory could not have been filled, and
  // filling one changes its mtime).
  Status Finish();

  const std::string& dir() const { return dir_; }

 private:
  struct PendingDir {
    std::string path;
    uint32_t mode;
    int64_t mtime_ns;
  };
  // Opens the directory holding `path`'s last component, creating missing
  // ancestors; *name receives that last component.
  Status OpenParent(const std::string& path, bool create, UniqueFd* parent, std::string* name) const;
  mode_t FileMode(uint32_t mode) const;
  mode_t DirMode(uint32_t mode) const;

  std::string dir_;
  UniqueFd dirfd_;
  const BlobStore* store_ = nullptr;
  Options options_;
  std::vector<PendingDir> dirs_;
};

}  // namespace guard
