#include "supervisor/git/object_pack.h"

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include <set>
#include <string>

namespace guard {

// Above the loose (1) and pack (2) backends, so that it receives every write.
constexpr int kMemPackPriority = 1000;

ObjectPack::~ObjectPack() {
  // The memory backend stays in the odb the repository holds: emptied,
  // it only serves no more reads. The repository frees it with the odb.
  if (mempack_ != nullptr) git_mempack_reset(mempack_);
}

Status ObjectPack::Attach(git_repository* repo) {
  repo_ = repo;
  git_odb* odb = nullptr;
  int rc = git_repository_odb(&odb, repo);
  if (rc < 0) return GitError(rc, "object database");
  odb_.reset(odb);
  rc = git_mempack_new(&mempack_);
  if (rc < 0) return GitError(rc, "in-memory objects");
  rc = git_odb_add_backend(odb, mempack_, kMemPackPriority);
  if (rc < 0) {
    mempack_->free(mempack_);
    mempack_ = nullptr;
    return GitError(rc, "in-memory objects");
  }
  return Status::Ok();
}

Status ObjectPack::Write(const std::vector<git_oid>& objects) {
  if (objects.empty()) return Status::Ok();
  git_packbuilder* pb = nullptr;
  int rc = git_packbuilder_new(&pb, repo_);
  if (rc < 0) return GitError(rc, "pack");
  GitPackBuilder owned(pb);
  // The delta search is most of a large checkpoint's time: on every core
  // (0 = as many threads as the machine has).
  git_packbuilder_set_threads(pb, 0);
  std::set<std::string> seen;
  for (const git_oid& id : objects) {
    if (!seen.insert(OidHex(id)).second) continue;
    rc = git_packbuilder_insert(pb, &id, nullptr);
    if (rc < 0) return GitError(rc, "pack: object " + OidHex(id));
  }
  rc = git_packbuilder_write(pb, nullptr, 0, nullptr, nullptr);
  if (rc < 0) return GitError(rc, "writing the pack");
  rc = git_odb_refresh(odb_.get());
  if (rc < 0) return GitError(rc, "object database");
  return Status::Ok();
}

}  // namespace guard
