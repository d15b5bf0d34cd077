#include "supervisor/watch/hint_set.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "common/path_util.h"

namespace guard {

void HintSet::Add(const WatchHint& hint) {
  if (all_) return;
  if (hint.scope == WatchHint::Scope::kAll || (hint.path == root_ && hint.scope == WatchHint::Scope::kTree)) {
    all_ = true;
    names_.clear();
    return;
  }
  if (!PathIsUnder(hint.path, root_)) return;  // the root itself as a path: its own mode
  names_.push_back(hint);
}

std::vector<WatchHint> HintSet::Take() {
  std::vector<WatchHint> out;
  if (all_) {
    all_ = false;
    out.push_back({root_, WatchHint::Scope::kAll});
    return out;
  }
  // By path, a tree before a path of the same name: the tree covers it.
  std::sort(names_.begin(), names_.end(), [](const WatchHint& a, const WatchHint& b) {
    if (a.path != b.path) return a.path < b.path;
    return a.scope == WatchHint::Scope::kTree && b.scope != WatchHint::Scope::kTree;
  });
  // A tree sorts before the names below it, but not always just before
  // them ("a/b" < "a/b-c" < "a/b/c"): each name looks for a hinted tree
  // among its ancestors.
  std::set<std::string_view> trees;
  auto covered = [&](const std::string& path) {
    for (std::string_view p = path; p.size() > root_.size();) {
      if (trees.count(p) != 0) return true;
      size_t slash = p.rfind('/');
      if (slash == std::string_view::npos) break;
      p = p.substr(0, slash);
    }
    return false;
  };
  for (const WatchHint& h : names_) {
    if (!out.empty() && out.back().path == h.path) continue;  // the tree before it covers it
    if (covered(h.path)) continue;
    out.push_back(h);
    if (h.scope == WatchHint::Scope::kTree) trees.insert(h.path);
  }
  names_.clear();
  return out;
}

}  // namespace guard
