#include "supervisor/base/root_finder.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace guard {

Status FindRoot(const std::string& explicit_root, std::string* out) {
  char buf[PATH_MAX];
  if (!explicit_root.empty()) {
    if (realpath(explicit_root.c_str(), buf) == nullptr) {
      return Status::FromErrno("--root " + explicit_root, errno);
    }
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("--root " + explicit_root + ": not a directory");
    }
    *out = buf;
    return Status::Ok();
  }
  std::string cwd;
  bool removed;
  GUARD_RETURN_IF_ERROR(CurrentDirectory(&cwd, &removed));
  if (removed) return Status::NotFound("current directory " + cwd + ": it has been removed");
  // Walk up looking for .git (a directory, or a file in a linked work tree).
  for (std::string dir = cwd;;) {
    struct stat st;
    if (lstat((dir == "/" ? "/.git" : dir + "/.git").c_str(), &st) == 0) {
      *out = dir;
      return Status::Ok();
    }
    if (dir == "/") break;
    size_t slash = dir.rfind('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
  *out = cwd;
  return Status::Ok();
}

Status CurrentDirectory(std::string* out, bool* removed) {
  *removed = false;
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf) != nullptr) {
    char real[PATH_MAX];
    if (realpath(buf, real) == nullptr) return Status::FromErrno(buf, errno);
    *out = real;
    return Status::Ok();
  }
  if (errno != ENOENT) return Status::FromErrno("current directory", errno);
  ssize_t n = readlink("/proc/self/cwd", buf, sizeof buf - 1);
  if (n < 0) return Status::FromErrno("current directory (removed)", errno);
  std::string path(buf, static_cast<size_t>(n));
  const std::string kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    path.resize(path.size() - kDeleted.size());
  }
  if (path.empty() || path[0] != '/') return Status::NotFound("the current directory has been removed");
  *out = path;
  *removed = true;
  return Status::Ok();
}

Status ResolveRecordedRoot(const std::string& dir, std::string* out) {
  char buf[PATH_MAX];
  if (realpath(dir.c_str(), buf) != nullptr) {
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument("--root " + dir + ": not a directory");
    }
    *out = buf;
    return Status::Ok();
  }
  if (errno != ENOENT || dir.empty()) return Status::FromErrno("--root " + dir, errno);
  std::filesystem::path abs(dir);
  if (abs.is_relative()) {
    std::string cwd;
    bool removed;
    GUARD_RETURN_IF_ERROR(CurrentDirectory(&cwd, &removed));
    abs = std::filesystem::path(cwd) / abs;
  }
  std::string norm = abs.lexically_normal().string();
  while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
  *out = norm;
  return Status::Ok();
}

}  // namespace guard
