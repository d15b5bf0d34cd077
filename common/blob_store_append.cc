// Append objects: a file that only grew since its last stored version is
// stored as that version's key and the new bytes (blob_append_format.h,
// docs/format.md (Part II), "Append objects").
#include <fcntl.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <string>

#include "common/blob_append_format.h"
#include "common/blob_codec.h"
#include "common/blob_store.h"
#include "common/blob_store_layout.h"
#include "common/file_io.h"
#include "common/sparse_file.h"

namespace guard {

using namespace store_layout;

namespace {

// The depth of the object holding `key` (0: raw or .zst), or false when
// there is none or it cannot be read as an append object.
bool DepthOf(int dirfd, const BlobKey& key, uint32_t* depth) {
  std::string name = FindObject(dirfd, key);
  if (name.empty()) return false;
  *depth = 0;
  if (name.size() < 4 || name.compare(name.size() - 4, 4, kAppendSuffix) != 0) return true;
  UniqueFd fd;
  if (!OpenFileAt(dirfd, name, O_RDONLY | O_NOFOLLOW, 0, &fd).ok()) return false;
  char raw[kAppendHeaderSize];
  size_t got = 0;
  AppendHeader h;
  if (!PreadFull(fd.get(), raw, sizeof raw, 0, &got, "blob read").ok() || got < sizeof raw ||
      !DecodeAppendHeader(raw, &h)) {
    return false;
  }
  *depth = h.depth;
  return true;
}

}  // namespace

Status BlobStore::NoteAppendObjects() {
  if (append_version_.load(std::memory_order_acquire)) return Status::Ok();
  const std::string path = dir_ + "/VERSION";
  std::string text;
  GUARD_RETURN_IF_ERROR(ReadFileToString(path, &text));
  if (std::atoi(text.c_str()) < kStoreVersionAppend) {
    // Durable before any object of the new kind can be: a guard that reads
    // only version 1 then refuses the store instead of finding keys missing.
    GUARD_RETURN_IF_ERROR(WriteFileAtomic(path, std::to_string(kStoreVersionAppend) + "\n", 0600));
    GUARD_RETURN_IF_ERROR(FsyncDir(dir_));
  }
  append_version_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status BlobStore::PutFdAfter(int fd, const BlobKey& base, uint64_t base_size, BlobKey* key, uint64_t* size,
                             bool* appended) {
  if (appended) *appended = false;
  if (int err = injected_errno_.load()) return Status::FromErrno("blob store: put (injected failure)", err);
  uint32_t base_depth = 0;
  if (base_size < kAppendMinBase || !DepthOf(dirfd_.get(), base, &base_depth) || base_depth >= kAppendMaxDepth) {
    return PutFd(fd, key, size);
  }
  std::unique_ptr<XXH3_state_t, XxhStateFree> hash(XXH3_createState());
  std::unique_ptr<char[]> buf(new (std::nothrow) char[kBlobChunkSize]);
  if (!hash || !buf) return Status::IOError("blob store: out of memory");
  XXH3_128bits_reset(hash.get());

  // Is the file's beginning the base? Hashed, not compared byte by byte:
  // the key is the hash of the base's content.
  SparseReader reader(fd);
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < base_size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kBlobChunkSize, base_size - offset));
    size_t got = 0;
    GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), want, offset, &got));
    if (got < want) return PutFd(fd, key, size);  // shorter than the base now
    XXH3_128bits_update(hash.get(), buf.get(), got);
    offset += static_cast<off_t>(got);
  }
  XXH128_hash_t prefix = XXH3_128bits_digest(hash.get());
  if (!(BlobKey{prefix.high64, prefix.low64} == base)) return PutFd(fd, key, size);

  size_t got = 0;
  GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), kBlobChunkSize, offset, &got));
  // The base is named by the object about to be placed (or is the content
  // itself): fresh for a sweep running now (store_gc.h).
  Status alive = KeepAlive(base);
  if (alive.IsNotFound()) return PutFd(fd, key, size);  // swept since the look
  GUARD_RETURN_IF_ERROR(alive);
  if (got == 0) {  // not grown: the same content
    *key = base;
    if (size) *size = base_size;
    return Status::Ok();
  }
  GUARD_RETURN_IF_ERROR(NoteAppendObjects());

  AppendHeader h;
  h.depth = base_depth + 1;
  h.base = base;
  h.base_size = base_size;
  const std::string header = EncodeAppendHeader(h);
  const std::string tmp = "tmp/" + UniqueName();
  UniqueFd out;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd_.get(), tmp, O_WRONLY | O_CREAT | O_EXCL, 0600, &out));
  Status s = WriteAll(out.get(), header.data(), header.size(), "blob write");
  uint64_t total = base_size;
  // Reads to the end of the file as it is now, as PutFd does.
  while (s.ok() && got > 0) {
    XXH3_128bits_update(hash.get(), buf.get(), got);
    total += got;
    s = WriteAll(out.get(), buf.get(), got, "blob write");
    offset += static_cast<off_t>(got);
    if (s.ok() && got == kBlobChunkSize) {
      s = reader.ReadFull(buf.get(), kBlobChunkSize, offset, &got);
    } else {
      got = 0;
    }
  }
  XXH128_hash_t whole = XXH3_128bits_digest(hash.get());
  const BlobKey k{whole.high64, whole.low64};
  if (s.ok()) s = PlaceTemp(tmp, std::move(out), k, ObjectKind::kAppend);
  if (!s.ok()) {
    ::unlinkat(dirfd_.get(), tmp.c_str(), 0);  // no partial blob stays behind
    return s;
  }
  *key = k;
  if (size) *size = total;
  if (appended) *appended = true;
  return Status::Ok();
}

}  // namespace guard
