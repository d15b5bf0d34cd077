#include "supervisor/watch/fsevents_hints.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "supervisor/watch/fsevents_flags.h"

namespace guard {
namespace {

using Scope = WatchHint::Scope;

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

std::string StripTrailingSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Whether `path` or one of its ancestors is in `trees`.
bool UnderTree(const std::string& path, const std::unordered_set<std::string>& trees) {
  if (trees.empty()) return false;
  if (trees.count(path) > 0 || trees.count("/") > 0) return true;
  for (size_t i = path.size(); i-- > 1;) {
    if (path[i] == '/' && trees.count(path.substr(0, i)) > 0) return true;
  }
  return false;
}

// The directory holding `path` ("/" for "/x").
std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

}  // namespace

bool FsEventScope(uint32_t flags, WatchHint::Scope* scope) {
  using namespace fsevents;
  if (flags & (kUserDropped | kKernelDropped | kEventIdsWrapped | kRootChanged)) {
    *scope = Scope::kAll;
    return true;
  }
  constexpr uint32_t kItemChanges = kItemCreated | kItemRemoved | kItemInodeMetaMod | kItemRenamed | kItemModified |
                                    kItemFinderInfoMod | kItemChangeOwner | kItemXattrMod | kItemCloned;
  constexpr uint32_t kComesOrGoes = kItemCreated | kItemRemoved | kItemRenamed;
  if ((flags & (kMustScanSubDirs | kMount | kUnmount)) || ((flags & kItemIsDir) && (flags & kComesOrGoes))) {
    *scope = Scope::kTree;
    return true;
  }
  if (flags & kItemChanges) {
    *scope = Scope::kPath;
    return true;
  }
  if (flags & kHistoryDone) return false;
  // No item flag: a directory-level event (what a stream without file
  // events reports), or a flag this code does not know: look beneath.
  *scope = Scope::kTree;
  return true;
}

FsEventMapper::FsEventMapper(std::string root, std::string canonical_root)
    : root_(StripTrailingSlashes(std::move(root))) {
  std::string canonical = StripTrailingSlashes(std::move(canonical_root));
  auto add = [this](const std::string& s) {
    if (std::find(spellings_.begin(), spellings_.end(), s) == spellings_.end()) spellings_.push_back(s);
  };
  add(canonical);
  add(root_);
  // The firmlinks of / to /private, in both directions.
  for (const char* link : {"/var", "/tmp", "/etc"}) {
    const std::string l = link;
    for (const std::string& s : std::vector<std::string>(spellings_)) {
      if (s == l || StartsWith(s, l + "/")) add("/private" + s);
      if (s == "/private" + l || StartsWith(s, "/private" + l + "/")) add(s.substr(8));
    }
  }
  // The Data volume's own spelling of the same paths.
  const std::string data = "/System/Volumes/Data";
  for (const std::string& s : std::vector<std::string>(spellings_)) {
    if (s != data && !StartsWith(s, data + "/") && s != "/") add(data + s);
  }
}

bool FsEventMapper::MapPath(const std::string& reported, std::string* mapped) const {
  const std::string path = StripTrailingSlashes(reported);
  for (const std::string& s : spellings_) {
    if (path == s) {
      *mapped = root_;
      return true;
    }
    const std::string prefix = s == "/" ? s : s + "/";
    if (StartsWith(path, prefix)) {
      *mapped = (root_ == "/" ? "" : root_) + "/" + path.substr(prefix.size());
      return true;
    }
  }
  return false;
}

void FsEventMapper::Decode(const std::vector<FsEvent>& events, std::vector<WatchHint>* out) const {
  std::vector<WatchHint> hints = std::move(*out);
  out->clear();
  bool all = false;
  for (const WatchHint& h : hints) all = all || h.scope == Scope::kAll;
  for (const FsEvent& e : events) {
    Scope scope;
    if (!FsEventScope(e.flags, &scope)) continue;
    WatchHint hint;
    if (scope == Scope::kAll) {
      all = true;
      continue;
    }
    // Outside the root: not guard's. (RootChanged, which names the root
    // or a parent of it, is kAll above.)
    if (!MapPath(e.path, &hint.path)) continue;
    hint.scope = scope;
    hints.push_back(std::move(hint));
  }
  if (all) {
    out->push_back({root_, Scope::kAll});
    return;
  }
  std::unordered_set<std::string> trees;
  for (const WatchHint& h : hints) {
    if (h.scope == Scope::kTree) trees.insert(h.path);
  }
  // In the order of first appearance, each path once, nothing beneath a tree.
  std::unordered_set<std::string> placed;
  for (WatchHint& h : hints) {
    if (h.scope == Scope::kTree) {
      if (h.path != root_ && UnderTree(Parent(h.path), trees)) continue;  // beneath another tree
    } else if (UnderTree(h.path, trees)) {
      continue;
    }
    if (!placed.insert(h.path).second) continue;
    out->push_back(std::move(h));
  }
}

}  // namespace guard
