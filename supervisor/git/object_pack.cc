#include "supervisor/git/object_pack.h"


#include <unistd.h>

#include <map>
#include <set>
#include <string>

#include "supervisor/git/pack_writer.h"

namespace guard {

// Above the loose (1) and pack (2) backends, so that it receives every write.
constexpr int kMemPackPriority = 1000;

ObjectPack::~ObjectPack() {
  // The ref naming the pack's objects is written by now, or never will be:
  // git gc may repack it from here on.
  if (!keep_.empty()) ::unlink(keep_.c_str());
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

Status ObjectPack::Write(const std::vector<git_oid>& objects, const std::vector<StoredBlob>& stored,
                         const BlobStore* store) {
  if (objects.empty()) return Status::Ok();
  git_buf dir = GIT_BUF_INIT;
  int rc = git_repository_item_path(&dir, repo_, GIT_REPOSITORY_ITEM_OBJECTS);
  if (rc < 0) return GitError(rc, "the object directory");
  std::string pack_dir(dir.ptr, dir.size);
  if (pack_dir.empty() || pack_dir.back() != '/') pack_dir += '/';
  pack_dir += "pack";
  git_buf_dispose(&dir);
  std::vector<git_oid> unique;
  unique.reserve(objects.size());
  std::set<std::string> seen;
  for (const git_oid& id : objects) {
    if (seen.insert(OidHex(id)).second) unique.push_back(id);
  }
  std::map<std::string, const StoredBlob*> streamed;
  if (store != nullptr) {
    for (const StoredBlob& b : stored) streamed.emplace(OidHex(b.id), &b);
  }
  PackWriter pack;
  GUARD_RETURN_IF_ERROR(pack.Begin(pack_dir, static_cast<uint32_t>(unique.size())));
  for (const git_oid& id : unique) {
    if (auto it = streamed.find(OidHex(id)); it != streamed.end()) {
      const StoredBlob& b = *it->second;
      GUARD_RETURN_IF_ERROR(pack.AddStream(id, GIT_OBJECT_BLOB, b.size, [&](const PackWriter::Sink& sink) {
        return store->ReadToSink(b.ref, sink, nullptr);
      }));
      continue;
    }
    // From memory, or from the repository for an object it had already.
    git_odb_object* obj = nullptr;
    rc = git_odb_read(&obj, odb_.get(), &id);
    if (rc < 0) return GitError(rc, "pack: object " + OidHex(id));
    Status s = pack.Add(id, git_odb_object_type(obj), git_odb_object_data(obj), git_odb_object_size(obj));
    git_odb_object_free(obj);
    GUARD_RETURN_IF_ERROR(s);
  }
  std::string name;
  GUARD_RETURN_IF_ERROR(pack.Finish(&name, &keep_));
  rc = git_odb_refresh(odb_.get());
  if (rc < 0) return GitError(rc, "object database");
  return Status::Ok();
}

}  // namespace guard
