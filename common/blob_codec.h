// The two encodings of a blob in the store (docs/format.md (Part II), "Encodings"):
// raw content, or exactly what one zstd frame decodes to. BlobEncoder turns a
// stream of content into one of them while hashing it; DecodeBlob turns either
// back into content while hashing it. Both use fixed buffers, so memory stays
// bounded (a few MiB, mostly zstd's window) whatever the size of the content.
#pragma once

#include <xxhash.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "common/blob_key.h"
#include "common/sparse_file.h"
#include "common/status.h"

namespace guard {

// Content is read and handed to BlobEncoder::Add in pieces of at most this.
inline constexpr size_t kBlobChunkSize = 256 * 1024;
inline constexpr int kBlobZstdLevel = 3;
// Frames are written with a window of 2^21 bytes (level 3's own choice for
// large inputs, pinned so that a zstd upgrade cannot change it); the reader
// refuses frames that ask for more than 2^23, which bounds the memory a
// damaged or foreign frame can make it allocate.
inline constexpr int kBlobZstdWindowLog = 21;
inline constexpr int kBlobZstdMaxWindowLog = 23;

struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};
struct XxhStateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

// Where decoded content goes. Returns non-ok to stop decoding.
using BlobSink = std::function<Status(const char* data, size_t n)>;

// Encodes one blob into `out_fd` (written sequentially with write(2)).
// The encoding is chosen on the first piece: zstd when it shrinks that piece
// to at most 90% of its size, raw otherwise (random data, media, archives).
// An encoder made with `compress` false writes raw whatever the content
// (what a session stores while it runs: store_compact.h). A raw blob is
// written with holes where the content has runs of zeros (sparse_file.h):
// `out_fd` must be a new, empty file.
class BlobEncoder {
 public:
  explicit BlobEncoder(int out_fd, bool compress = true);
  ~BlobEncoder();
  BlobEncoder(const BlobEncoder&) = delete;
  BlobEncoder& operator=(const BlobEncoder&) = delete;

  // Allocates the hash state and buffers; call once before Add.
  Status Init();
  // Feeds the next `n` (<= kBlobChunkSize) bytes; `last` marks the end of the
  // content and may come with n == 0.
  Status Add(const char* data, size_t n, bool last);

  // Valid once Add(..., last = true) has succeeded.
  bool compressed() const { return mode_ == Mode::kZstd; }
  BlobKey key() const;
  uint64_t size() const { return size_; }

 private:
  enum class Mode { kUndecided, kRaw, kZstd };
  Status Decide(const char* data, size_t n, bool last);
  Status AddRaw(const char* data, size_t n, bool last);

  int out_fd_;
  SparseWriter raw_out_;  // kRaw's writes
  bool compress_;
  Mode mode_ = Mode::kUndecided;
  uint64_t size_ = 0;
  std::unique_ptr<XXH3_state_t, XxhStateFree> hash_;
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> cctx_;
  std::unique_ptr<char[]> out_;
  size_t out_cap_ = 0;
};

// Reads a blob's encoding from `in_fd` (from offset 0 to end of file; a raw
// one's holes are not read: sparse_file.h) and
// passes the content to `sink`, computing its key. A zstd stream that does
// not decode, or ends inside a frame, is kCorruption; read errors and sink
// errors are returned as they are. The caller compares *key with the
// expected one: bytes reach the sink before the content can be verified.
Status DecodeBlob(int in_fd, bool compressed, const BlobSink& sink, BlobKey* key, uint64_t* size);

}  // namespace guard
