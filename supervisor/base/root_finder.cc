#include "supervisor/base/root_finder.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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
  if (getcwd(buf, sizeof buf) == nullptr) return Status::FromErrno("current directory", errno);
  char real[PATH_MAX];
  if (realpath(buf, real) == nullptr) return Status::FromErrno(buf, errno);
  std::string cwd = real;
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

}  // namespace guard
