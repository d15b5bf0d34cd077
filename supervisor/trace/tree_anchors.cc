#include "supervisor/trace/tree_anchors.h"

#include <sys/stat.h>

#include "common/path_util.h"

namespace guard {

namespace {

bool SameDirectory(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

void TreeAnchors::Add(const std::string& dir) {
  for (std::string d = dir; d.size() > 1; d = ParentDir(d)) {
    struct stat st;
    if (stat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    bool given = d == dir;
    bool known = false;
    for (Anchor& a : anchors_) {
      if (a.dev == st.st_dev && a.ino == st.st_ino) {
        a.given = a.given || given;
        known = true;
      }
    }
    if (!known) anchors_.push_back(Anchor{d, st.st_dev, st.st_ino, given});
  }
}

bool TreeAnchors::CoversByName(const std::string& path) const {
  for (const Anchor& a : anchors_) {
    if (a.given && PathIsUnder(path, a.dir)) return true;
  }
  return false;
}

bool TreeAnchors::Find(const std::string& view, const std::string& path, std::string* out) const {
  if (anchors_.empty() || path.empty() || path[0] != '/') return false;
  // Kernel pseudo-filesystems hold no anchor (and examining /proc entries
  // of other processes is slow and racy).
  if (PathIsUnder(path, "/proc") || PathIsUnder(path, "/sys") || PathIsUnder(path, "/dev")) return false;
  // `end` is the length of the ancestor examined: path[0, end).
  for (size_t end = path.size();;) {
    std::string probe = view + (end == 0 ? std::string("/") : path.substr(0, end));
    struct stat st;
    if (lstat(probe.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      for (const Anchor& a : anchors_) {
        if (st.st_dev != a.dev || st.st_ino != a.ino) continue;
        std::string rest = path.substr(end);
        std::string mapped = a.dir + rest;
        size_t slash = path.rfind('/');
        if (!view.empty() && !rest.empty() &&
            !SameDirectory(view + (slash == 0 ? "/" : path.substr(0, slash)), ParentDir(mapped))) {
          return false;
        }
        *out = std::move(mapped);
        return true;
      }
    }
    if (end == 0) return false;
    end = path.rfind('/', end - 1);
  }
}

}  // namespace guard
