#include "supervisor/capture/link_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_io.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

constexpr int kMaxDepth = 256;  // deeper trees are not indexed below that

}  // namespace

void LinkIndex::Build() {
  built_ = true;
  int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  UniqueFd root(fd);
  Walk(root.get(), "", 0);
}

void LinkIndex::Walk(int dir_fd, const std::string& rel_dir, int depth) {
  std::vector<std::string> entries;
  if (!ReadDirNames(dir_fd, rel_dir, &entries).ok()) return;
  for (const std::string& name : entries) {
    std::string rel = rel_dir.empty() ? name : rel_dir + "/" + name;
    struct stat st;
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      names_[{st.st_dev, st.st_ino}].insert(rel);
    } else if (S_ISDIR(st.st_mode) && depth < kMaxDepth && root_ + "/" + rel != state_dir_) {
      int sub = static_cast<int>(
          GUARD_EINTR_RETRY(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
      if (sub < 0) continue;
      UniqueFd owned(sub);
      Walk(owned.get(), rel, depth + 1);
    }
  }
}

std::vector<std::string> LinkIndex::OtherNames(const std::string& rel, dev_t dev, ino_t ino) {
  if (!built_) Build();
  std::vector<std::string> out;
  auto it = names_.find({dev, ino});
  if (it == names_.end()) return out;
  for (auto name = it->second.begin(); name != it->second.end();) {
    struct stat st;
    bool holds = lstat((root_ + "/" + *name).c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino;
    if (!holds) {
      name = it->second.erase(name);
      continue;
    }
    if (*name != rel) out.push_back(*name);
    ++name;
  }
  return out;
}

void LinkIndex::Learn(const std::string& rel) {
  if (!built_) return;  // the walk, when it comes, will find it
  struct stat st;
  if (lstat((root_ + "/" + rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2) return;
  names_[{st.st_dev, st.st_ino}].insert(rel);
}

}  // namespace guard
