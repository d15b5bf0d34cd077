// Reading a blob back: a pending blob, or an object of any kind (raw, .zst,
// .app), verified against its key. docs/format.md (Part II).
#include <fcntl.h>
#include <xxhash.h>

#include <memory>
#include <string>

#include "common/blob_append_format.h"
#include "common/blob_codec.h"
#include "common/blob_store_layout.h"
#include "common/file_io.h"
#include "common/sparse_file.h"

namespace guard {

namespace store_layout {

namespace {

// An append object open as `fd`: its base (read through ReadObject, of a
// depth below this one's), then its own bytes, hashed together into *key.
Status DecodeAppendObject(int dirfd, int fd, const BlobSink& sink, uint32_t max_depth, BlobKey* key,
                          uint64_t* size) {
  char raw[kAppendHeaderSize];
  size_t got = 0;
  GUARD_RETURN_IF_ERROR(PreadFull(fd, raw, sizeof raw, 0, &got, "blob read"));
  AppendHeader h;
  if (got < sizeof raw || !DecodeAppendHeader(raw, &h)) {
    return Status::Corruption("not an append object this guard reads (format " + std::to_string(kAppendFormatVersion) +
                              ")");
  }
  if (h.depth > max_depth) return Status::Corruption("its chain of bases is too deep, or loops");
  std::unique_ptr<XXH3_state_t, XxhStateFree> hash(XXH3_createState());
  std::unique_ptr<char[]> buf(new (std::nothrow) char[kBlobChunkSize]);
  if (!hash || !buf) return Status::IOError("blob decoder: out of memory");
  XXH3_128bits_reset(hash.get());
  uint64_t total = 0;
  auto emit = [&](const char* p, size_t n) -> Status {
    if (n == 0) return Status::Ok();
    XXH3_128bits_update(hash.get(), p, n);
    total += n;
    return sink(p, n);
  };
  BlobRef base;
  base.kind = BlobRef::Kind::kKey;
  base.key = h.base;
  uint64_t base_size = 0;
  Status s = ReadObject(dirfd, base, emit, &base_size, h.depth - 1);
  if (s.IsNotFound()) return Status::Corruption("its base " + s.message());
  GUARD_RETURN_IF_ERROR(s);
  if (base_size != h.base_size) return Status::Corruption("its base is not of the size it names");
  SparseReader reader(fd);
  for (off_t offset = kAppendHeaderSize;;) {
    GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), kBlobChunkSize, offset, &got));
    GUARD_RETURN_IF_ERROR(emit(buf.get(), got));
    offset += static_cast<off_t>(got);
    if (got < kBlobChunkSize) break;
  }
  XXH128_hash_t d = XXH3_128bits_digest(hash.get());
  *key = BlobKey{d.high64, d.low64};
  if (size) *size = total;
  return Status::Ok();
}

}  // namespace

Status ReadObject(int dirfd, const BlobRef& ref, const BlobSink& sink, uint64_t* size, uint32_t max_depth) {
  if (ref.kind == BlobRef::Kind::kNone) return Status::InvalidArgument("blob reference is empty");
  if (ref.kind == BlobRef::Kind::kPending) {
    if (!ValidPendingName(ref.pending)) {
      return Status::InvalidArgument("invalid pending blob name '" + ref.pending + "'");
    }
    UniqueFd fd;
    Status s = OpenFileAt(dirfd, PendingPath(ref.pending), O_RDONLY | O_NOFOLLOW, 0, &fd);
    if (s.ok()) {
      BlobKey unused;
      return DecodeBlob(fd.get(), false, sink, &unused, size);
    }
    if (!s.IsNotFound()) return s;
    // Already resolved: a journal read before its kBlobResolved record was
    // written (or that lost it in a crash) still finds the content.
    BlobRef by_key;
    by_key.kind = BlobRef::Kind::kKey;
    s = ReadResolvedMarker(dirfd, ref.pending, &by_key.key);
    if (s.IsNotFound()) return Status::NotFound("pending blob " + ref.pending + " is missing");
    GUARD_RETURN_IF_ERROR(s);
    return ReadObject(dirfd, by_key, sink, size, max_depth);
  }

  std::string hex = ref.key.Hex();
  UniqueFd fd;
  ObjectKind kind = ObjectKind::kRaw;
  Status s;
  // Raw first, then .zst: compaction makes the .zst durable before the raw
  // file goes, so a reader racing with it finds one.
  for (ObjectKind k : kObjectKinds) {
    kind = k;
    s = OpenFileAt(dirfd, ObjectName(ref.key, k), O_RDONLY | O_NOFOLLOW, 0, &fd);
    if (!s.IsNotFound()) break;
  }
  if (s.IsNotFound()) return Status::NotFound("blob " + hex + " is missing");
  GUARD_RETURN_IF_ERROR(s);
  BlobKey actual;
  if (kind == ObjectKind::kAppend) {
    s = DecodeAppendObject(dirfd, fd.get(), sink, max_depth, &actual, size);
  } else {
    s = DecodeBlob(fd.get(), kind == ObjectKind::kZstd, sink, &actual, size);
  }
  if (s.IsCorruption()) return Status::Corruption("blob " + hex + " is damaged: " + s.message());
  GUARD_RETURN_IF_ERROR(s);
  if (!(actual == ref.key)) {
    return Status::Corruption("blob " + hex + " is damaged: content does not match its key");
  }
  return Status::Ok();
}

}  // namespace store_layout

}  // namespace guard
