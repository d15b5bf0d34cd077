// The directories guard must recognise by whatever path reaches them: the
// root and the state directory. A bind mount (made before the session, or
// inside it in a mount namespace of its own) or a chroot gives a directory
// other names than the one guard knows; the kernel acts on the directory,
// not the name. An anchor is therefore known by its device and inode, and a
// path is mapped to its name below an anchor by finding, among the path's
// ancestors, one with the anchor's device and inode.
//
// The directories above an anchor are noted too (the filesystem's "/"
// aside): a tracee in a mount namespace of its own (bubblewrap) that sees
// the user's home bound at its own place has its names mapped to guard's
// through them, and a walk up a path stops at the first one it meets.
//
// Limit: a bind mount of a directory strictly below an anchor (mount --bind
// ROOT/sub /elsewhere) is not found: its ancestors are not the anchor, and
// telling which directory below the anchor it is would need a search.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace guard {

class TreeAnchors {
 public:
  // Notes `dir` (absolute, canonical) and the directories above it by their
  // device and inode. A directory that cannot be examined is left out.
  void Add(const std::string& dir);
  bool empty() const { return anchors_.empty(); }

  // Whether `path` (absolute) names something at or below a directory given
  // to Add by its name: then it needs no mapping.
  bool CoversByName(const std::string& path) const;

  // Whether `path`, examined as `view` + `path` (`view` "" for guard's own
  // view, "/proc/TID/root" for a tracee's in another mount namespace), is at
  // or below an anchor: then *out is the anchor's name followed by the rest
  // of `path`. The ancestors are examined deepest first (the path itself
  // included, without following it): the deepest anchor wins. Through a
  // tracee's view, the mapped name's parent must be the very directory the
  // tracee's is (no mount of the tracee's in between), else false.
  bool Find(const std::string& view, const std::string& path, std::string* out) const;

  // Whether an anchor (a directory given to Add, or one above it) is on
  // device `dev`.
  bool HoldsDevice(dev_t dev) const {
    for (const Anchor& a : anchors_) {
      if (a.dev == dev) return true;
    }
    return false;
  }

 private:
  struct Anchor {
    std::string dir;
    dev_t dev;
    ino_t ino;
    bool given;  // given to Add, not one above it
  };
  std::vector<Anchor> anchors_;
};

}  // namespace guard
