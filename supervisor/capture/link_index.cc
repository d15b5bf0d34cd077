#include "supervisor/capture/link_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/file_io.h"
#include "common/path_util.h"
#include "common/unique_fd.h"
#include "supervisor/base/tree_walk.h"

namespace guard {
namespace {

constexpr int kMaxDepth = 256;  // deeper trees are not indexed below that

}  // namespace

void LinkIndex::Build() {
  built_ = true;
  UniqueFd root;
  if (!OpenFile(root_, O_RDONLY | O_DIRECTORY, 0, &root).ok()) return;
  TreeWalkOptions options;
  options.descend = [this](const TreeEntry& e) {
    return e.depth < kMaxDepth && PathJoin(root_, e.rel) != state_dir_;
  };
  (void)WalkTree(root.get(), ".", options, [this](const TreeEntry& e) {
    if (S_ISREG(e.st.st_mode) && e.st.st_nlink > 1) names_[{e.st.st_dev, e.st.st_ino}].insert(e.rel);
  });
}

std::vector<std::string> LinkIndex::OtherNames(const std::string& rel, dev_t dev, ino_t ino) {
  if (!built_) Build();
  std::vector<std::string> out;
  auto it = names_.find({dev, ino});
  if (it == names_.end()) return out;
  for (auto name = it->second.begin(); name != it->second.end();) {
    struct stat st;
    bool holds = lstat(PathJoin(root_, *name).c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino;
    if (!holds) {
      name = it->second.erase(name);
      continue;
    }
    if (*name != rel) out.push_back(*name);
    ++name;
  }
  return out;
}

std::vector<std::string> LinkIndex::Search(dev_t dev, ino_t ino) const {
  std::vector<std::string> out;
  UniqueFd root;
  if (!OpenFile(root_, O_RDONLY | O_DIRECTORY, 0, &root).ok()) return out;
  TreeWalkOptions options;
  options.descend = [this](const TreeEntry& e) {
    return e.depth < kMaxDepth && PathJoin(root_, e.rel) != state_dir_;
  };
  (void)WalkTree(root.get(), ".", options, [&](const TreeEntry& e) {
    if (e.st.st_dev == dev && e.st.st_ino == ino && S_ISREG(e.st.st_mode)) out.push_back(e.rel);
  });
  std::sort(out.begin(), out.end());
  return out;
}

void LinkIndex::Learn(const std::string& rel) {
  if (!built_) return;  // the walk, when it comes, will find it
  struct stat st;
  if (lstat(PathJoin(root_, rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2) return;
  names_[{st.st_dev, st.st_ino}].insert(rel);
}

}  // namespace guard
