#include "supervisor/base/tree_walk.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/file_io.h"
#include "common/os_calls.h"

namespace guard {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

std::string Join(const std::string& top, const std::string& name) {
  if (top.empty() || top == ".") return name;
  return top == "/" ? "/" + name : top + "/" + name;
}

Status WalkBelow(int dir_fd, const std::string& rel_dir, int depth, const TreeWalkOptions& options,
                 const std::function<void(const TreeEntry&)>& visit) {
  std::vector<std::string> names;
  GUARD_RETURN_IF_ERROR(ReadDirNames(dir_fd, rel_dir, &names));
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string rel = Join(rel_dir, name);
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    Status listed;
    if (S_ISDIR(st.st_mode) &&
        (!options.descend || options.descend(TreeEntry{dir_fd, name, rel, st, depth, listed}))) {
      UniqueFd sub;
      Status opened = OpenFileAt(dir_fd, name, kDirFlags, 0, &sub);
      listed = opened.ok() ? WalkBelow(sub.get(), rel, depth + 1, options, visit)
                           : Status::FromErrno(rel, opened.err());
    }
    visit(TreeEntry{dir_fd, name, rel, st, depth, listed});
  }
  return Status::Ok();
}

}  // namespace

bool IsPlainRelative(std::string_view rel) {
  if (rel == ".") return true;
  if (rel.empty() || rel[0] == '/' || rel.find('\0') != std::string_view::npos) return false;
  for (size_t start = 0;;) {
    const size_t slash = rel.find('/', start);
    const std::string_view part = rel.substr(start, slash == std::string_view::npos ? rel.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

Status OpenDirBeneath(int dir_fd, std::string_view rel, int flags, UniqueFd* out) {
  const std::string what(rel);
  if (!IsPlainRelative(rel)) return Status::FromErrno(what + ": not a plain relative path", EINVAL);
  int cur = dir_fd;
  UniqueFd held;
  for (size_t start = 0;;) {
    const size_t slash = rel.find('/', start);
    const bool last = slash == std::string_view::npos;
    const std::string name(rel.substr(start, last ? rel.npos : slash - start));
    const int f = (last ? flags : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    const int fd = static_cast<int>(GUARD_EINTR_RETRY(::openat(cur, name.c_str(), f)));
    if (fd < 0) {
      int err = errno;
      // O_PATH | O_NOFOLLOW opens a symlink itself and O_DIRECTORY then
      // fails with ENOTDIR: tell the two apart.
      struct stat st;
      if ((err == ENOTDIR || err == ELOOP) && ::fstatat(cur, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      }
      return Status::FromErrno(what, err);
    }
    if (last) {
      out->reset(fd);
      return Status::Ok();
    }
    held.reset(fd);
    cur = fd;
    start = slash + 1;
  }
}

Status WalkTree(int dir_fd, const std::string& top, const TreeWalkOptions& options,
                const std::function<void(const TreeEntry&)>& visit) {
  return WalkBelow(dir_fd, top, 0, options, visit);
}

}  // namespace guard
