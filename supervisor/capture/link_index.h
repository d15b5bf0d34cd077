// LinkIndex: the other names, inside the root, of a file that has several.
//
// Writing to (or chmod'ing) one name of a hard-linked file changes every
// name of its inode. The capture records the pre-image under the name
// written and, through this index, under each other name in the root
// (flag kSameInode, docs/format.md Part IV), so that undo restores them all.
//
// The index is built on first use, by one walk of the root that follows no
// symlink and skips guard's state directory, and holds only files with more
// than one link. It then learns the names that links and renames make during
// the session (Learn); a name that no longer holds the inode is dropped when
// it is next looked up. Sessions that never change a multiply-linked file
// never walk the tree.
#pragma once

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace guard {

class LinkIndex {
 public:
  LinkIndex(std::string root, std::string state_dir) : root_(std::move(root)), state_dir_(std::move(state_dir)) {}

  // The names other than `rel` that hold inode (dev, ino) now, sorted.
  std::vector<std::string> OtherNames(const std::string& rel, dev_t dev, ino_t ino);
  // Every name that holds inode (dev, ino) now, found by a walk of the root
  // (not by the index, which holds only files that had several links when
  // it was built): for a file whose own name is gone and that has another
  // one somewhere, a rare case.
  std::vector<std::string> Search(dev_t dev, ino_t ino) const;
  // `rel` may have become a name of a multiply-linked file (a link or a
  // rename made it): noted if the index is built and it is one.
  void Learn(const std::string& rel);
  bool built() const { return built_; }

 private:
  void Build();

  std::string root_;
  std::string state_dir_;
  bool built_ = false;
  std::map<std::pair<dev_t, ino_t>, std::set<std::string>> names_;
};

}  // namespace guard
