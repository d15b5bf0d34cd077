#include "supervisor/git/stored_blob.h"

#include <fcntl.h>

#include <cstdio>
#include <memory>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/git/sha1.h"

namespace guard {
namespace {

Status HashWithSize(const BlobStore& store, const BlobRef& ref, uint64_t size, git_oid* id, uint64_t* got) {
  Sha1 sha1;
  if (!sha1.Init()) return Status::IOError("SHA-1 unavailable");
  // git's blob id: SHA-1 of "blob <size>\0" and the content.
  std::string header = "blob " + std::to_string(size);
  header.push_back('\0');
  if (!sha1.Update(header.data(), header.size())) return Status::IOError("SHA-1 failed");
  GUARD_RETURN_IF_ERROR(store.ReadToSink(
      ref,
      [&](const char* p, size_t n) {
        return sha1.Update(p, n) ? Status::Ok() : Status::IOError("SHA-1 failed");
      },
      got));
  static_assert(Sha1::kSize == GIT_OID_RAWSZ);
  unsigned char digest[Sha1::kSize];
  if (!sha1.Final(digest)) return Status::IOError("SHA-1 failed");
  git_oid_fromraw(id, digest);
  return Status::Ok();
}

}  // namespace

Status HashStoredBlob(const BlobStore& store, const BlobRef& ref, uint64_t expected_size, git_oid* id,
                      uint64_t* size) {
  GUARD_RETURN_IF_ERROR(HashWithSize(store, ref, expected_size, id, size));
  if (*size == expected_size) return Status::Ok();
  uint64_t again = 0;
  GUARD_RETURN_IF_ERROR(HashWithSize(store, ref, *size, id, &again));
  if (again != *size) return Status::Corruption("blob " + ref.key.Hex() + " changed size while it was read");
  return Status::Ok();
}

BlobIdCache BlobIdCache::Load(const std::string& path) {
  BlobIdCache cache;
  cache.path_ = path;
  std::string text;
  if (!ReadFileToString(path, &text).ok()) return cache;
  for (size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    char key[33], oid[41];
    unsigned long long size = 0;
    std::string line = text.substr(at, nl - at);
    if (std::sscanf(line.c_str(), "%32s %llu %40s", key, &size, oid) != 3) continue;
    Entry e;
    BlobKey k;
    if (!BlobKey::FromHex(key, &k) || git_oid_fromstr(&e.id, oid) != 0) continue;
    e.size = size;
    cache.by_key_[k.Hex()] = e;
  }
  return cache;
}

bool BlobIdCache::Find(const BlobRef& ref, git_oid* id, uint64_t* size) const {
  if (ref.kind != BlobRef::Kind::kKey) return false;
  auto it = by_key_.find(ref.key.Hex());
  if (it == by_key_.end()) return false;
  git_oid_cpy(id, &it->second.id);
  *size = it->second.size;
  return true;
}

void BlobIdCache::Add(const BlobRef& ref, const git_oid& id, uint64_t size) {
  if (ref.kind != BlobRef::Kind::kKey) return;
  std::string hex = ref.key.Hex();
  if (!by_key_.emplace(hex, Entry{id, size}).second) return;
  added_.push_back(hex + " " + std::to_string(size) + " " + OidHex(id) + "\n");
}

Status BlobIdCache::Save() const {
  if (added_.empty() || path_.empty()) return Status::Ok();
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(path_, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600, &fd));
  std::string all;
  for (const std::string& line : added_) all += line;
  return WriteAll(fd.get(), all.data(), all.size(), path_);
}

}  // namespace guard
