// Append objects: a file that only grew since a stored version of it is
// stored as that version's key and the new bytes (blob_append_format.h,
// docs/format.md (Part II), "Append objects").
#include <fcntl.h>
#include <sys/stat.h>
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

// One stored version in a chain of append objects.
struct ChainLink {
  BlobKey key;
  uint64_t size = 0;
  uint32_t depth = 0;    // 0: a raw or .zst object
  BlobKey base;          // depth > 0: the version it extends
  uint64_t base_size = 0;
};

// Reads what the object holding `key` (of `size` bytes of content) says of
// its place in a chain; false when there is none or it cannot be read.
bool LinkOf(int dirfd, const BlobKey& key, uint64_t size, ChainLink* out) {
  std::string name = FindObject(dirfd, key);
  if (name.empty()) return false;
  *out = ChainLink{key, size, 0, BlobKey{}, 0};
  if (name.size() < 4 || name.compare(name.size() - 4, 4, kAppendSuffix) != 0) return true;
  UniqueFd fd;
  if (!OpenFileAt(dirfd, name, O_RDONLY | O_NOFOLLOW, 0, &fd).ok()) return false;
  char raw[kAppendHeaderSize];
  size_t got = 0;
  AppendHeader h;
  if (!PreadFull(fd.get(), raw, sizeof raw, 0, &got, "blob read").ok() || got < sizeof raw ||
      !DecodeAppendHeader(raw, &h) || h.base_size >= size) {
    return false;
  }
  out->depth = h.depth;
  out->base = h.base;
  out->base_size = h.base_size;
  return true;
}

// The version a new one of `new_size` bytes extends, given the latest
// stored version of the file: false when none fits (the caller stores the
// whole content).
bool ChooseAppendBase(int dirfd, const BlobKey& latest, uint64_t latest_size, uint64_t new_size, BlobKey* base,
                      uint64_t* base_size, uint32_t* base_depth) {
  ChainLink top;
  if (latest_size < kAppendMinBase || !LinkOf(dirfd, latest, latest_size, &top)) return false;
  // A version longer than the new one (the work saver read the file after
  // the call whose pre-image this is, and the shim's report came later):
  // an earlier version in its chain may still be a prefix.
  while (top.size > new_size) {
    if (top.depth == 0 || top.base_size < kAppendMinBase) return false;
    ChainLink down;
    if (!LinkOf(dirfd, top.base, top.base_size, &down) || down.depth >= top.depth) return false;
    top = down;
  }
  // Walk down the chain while the top's own bytes are fewer than twice
  // those the new version adds to it (or the chain is full): each version
  // then adds at most half the bytes of the one it extends, so a chain
  // holds about log2(appended / smallest append) links, and each appended
  // byte is stored again about that many times, not once per version
  // (docs/format.md (Part II), "Append objects": the writer's choice).
  while (top.depth > 0) {
    const uint64_t own = top.size - top.base_size;
    const uint64_t adds = new_size > top.size ? new_size - top.size : 0;
    if (top.depth < kAppendMaxDepth && own / 2 >= adds) break;
    if (top.base_size < kAppendMinBase) break;
    ChainLink down;
    if (!LinkOf(dirfd, top.base, top.base_size, &down) || down.depth >= top.depth) return false;
    top = down;
  }
  if (top.depth >= kAppendMaxDepth) return false;
  *base = top.key;
  *base_size = top.size;
  *base_depth = top.depth;
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

Status BlobStore::PutFdAfter(int fd, const BlobKey& latest, uint64_t latest_size, BlobKey* key, uint64_t* size,
                             bool* appended) {
  bool placed = false;
  GUARD_RETURN_IF_ERROR(PutAppend(fd, latest, latest_size, key, size, &placed));
  if (appended) *appended = placed;
  if (placed) return Status::Ok();
  return PutFd(fd, key, size);
}

Status BlobStore::PutAppend(int fd, const BlobKey& latest, uint64_t latest_size, BlobKey* key, uint64_t* size,
                            bool* placed) {
  *placed = false;
  if (int err = injected_errno_.load()) return Status::FromErrno("blob store: put (injected failure)", err);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return Status::Ok();
  const uint64_t now_size = static_cast<uint64_t>(st.st_size);
  BlobKey base;
  uint64_t base_size = 0;
  uint32_t base_depth = 0;
  if (!ChooseAppendBase(dirfd_.get(), latest, latest_size, now_size, &base, &base_size, &base_depth)) {
    return Status::Ok();
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
    if (got < want) return Status::Ok();  // shorter than the base now
    XXH3_128bits_update(hash.get(), buf.get(), got);
    offset += static_cast<off_t>(got);
  }
  XXH128_hash_t prefix = XXH3_128bits_digest(hash.get());
  if (!(BlobKey{prefix.high64, prefix.low64} == base)) return Status::Ok();

  size_t got = 0;
  GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), kBlobChunkSize, offset, &got));
  // The base is named by the object about to be placed (or is the content
  // itself): fresh for a sweep running now (store_gc.h).
  Status alive = KeepAlive(base);
  if (alive.IsNotFound()) return Status::Ok();  // swept since the look
  GUARD_RETURN_IF_ERROR(alive);
  if (got == 0) {  // not grown: the same content
    *key = base;
    if (size) *size = base_size;
    *placed = true;
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
  *placed = true;
  return Status::Ok();
}

Status BlobStore::ResolvePendingAfter(const std::string& pending_name, const BlobKey& latest, uint64_t latest_size,
                                      BlobKey* key, uint64_t* size, bool* appended) {
  *appended = false;
  *size = 0;
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  const std::string path = PendingPath(pending_name);
  UniqueFd fd;
  Status opened = OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW, 0, &fd);
  struct stat st;
  // Only the store's own copy (one link): an adopted file that still has a
  // name outside is the user's, and is resolved as ResolvePending does.
  if (opened.ok() && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
    *size = static_cast<uint64_t>(st.st_size);
    BlobKey k;
    bool placed = false;
    GUARD_RETURN_IF_ERROR(PutAppend(fd.get(), latest, latest_size, &k, size, &placed));
    if (placed) {
      GUARD_RETURN_IF_ERROR(RecordResolution(pending_name, k));
      *key = k;
      *appended = true;
      return Status::Ok();
    }
  }
  return ResolvePending(pending_name, key);
}

}  // namespace guard
