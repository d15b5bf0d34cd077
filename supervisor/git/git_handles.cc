#include "supervisor/git/git_handles.h"

#include <mutex>

namespace guard {

void InitGitLibrary() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

Status GitError(int rc, const std::string& what) {
  const git_error* e = git_error_last();
  std::string msg = what + ": " + (e != nullptr && e->message != nullptr ? e->message : "libgit2 error " + std::to_string(rc));
  if (rc == GIT_ENOTFOUND) return Status::NotFound(msg);
  return Status::IOError(msg);
}

std::string OidHex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

}  // namespace guard
