// TreeSnapshot: everything a test compares about a tree, byte for byte:
// for every path under the root (the root itself excluded), its type, its
// permission bits (mode & 07777), the content of a regular file and the
// target of a symlink. Times, owners and inode numbers are left out: guard
// does not promise to restore them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/journal_record.h"

namespace guard::e2e {

struct TreeEntry {
  FileType type = FileType::kAbsent;  // kRegular, kDirectory, kSymlink or kOther
  uint32_t mode = 0;                  // st_mode & 07777
  std::string content;                // kRegular
  std::string target;                 // kSymlink
  bool operator==(const TreeEntry&) const = default;
};

struct TreeSnapshot {
  std::map<std::string, TreeEntry> entries;  // relative path ("a/b") -> entry

  const TreeEntry* Find(const std::string& rel) const;
  // A copy without `prefix` and everything under it (e.g. ".git").
  TreeSnapshot Without(const std::string& prefix) const;
  // Only the regular files, path -> content.
  std::map<std::string, std::string> Files() const;
};

// Walks `root` without following symlinks. Throws std::runtime_error when a
// path cannot be read.
TreeSnapshot SnapshotTree(const std::string& root);

// Makes the tree at `root` hold exactly `snapshot`: everything under it is
// removed, then every entry written anew (new inodes, as a `git checkout`
// or an archive extraction makes them), parents first, directory modes set
// last; an "other" entry becomes a FIFO. Throws std::runtime_error.
void WriteSnapshot(const std::string& root, const TreeSnapshot& snapshot);

// One readable line per difference ("a: content differs: ..."), empty when
// the snapshots are equal.
std::vector<std::string> DiffSnapshots(const TreeSnapshot& expected, const TreeSnapshot& actual);

// A short description of an entry for messages.
std::string Describe(const TreeEntry& e);

}  // namespace guard::e2e
