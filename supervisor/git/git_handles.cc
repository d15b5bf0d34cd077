#include "supervisor/git/git_handles.h"

#include <mutex>

namespace guard {

#if defined(GUARD_LAZY_LIBGIT2)
LazyLibrary& Libgit2() {
  static LazyLibrary library(GUARD_LIBGIT2_SONAME, "libgit2");
  return library;
}
#endif

void InitGitLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // A checkpoint looks up the base tree's entry for every touched path:
    // libgit2 caches no tree over 4 KiB by default, so each lookup inflated
    // every large directory on the way again (a quarter of a 5,000-file
    // checkpoint's time). The cache's total stays bounded (256 MiB).
    git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_TREE, static_cast<size_t>(16 << 20));
    // By default libgit2 hashes every object it reads again to check its id,
    // which git itself does only in fsck: guard reads the objects it just
    // made (to pack them) and the base trees, and doubled its hashing.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    // A tree guard builds names blobs that are in no object database yet:
    // their content stays in guard's store until the pack streams it there
    // (stored_blob.h), so libgit2 must not ask the database for each entry.
    // Every id guard names it computed or read itself.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
  });
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
