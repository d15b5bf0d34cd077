// The append object: a blob stored as an earlier blob (its base) and the
// bytes appended to it, for a file that only grew (a log the work saver
// saves again and again). docs/format.md (Part II), "Append objects".
//
//   objects/XX/<32hex>.app   the header below, then the appended bytes (raw)
//
//   offset  size
//     0       8   magic "guardapp"
//     8       4   fixed32 format version (kAppendFormatVersion)
//    12       4   fixed32 depth: 1 + the base's depth (a raw or .zst base: 0)
//    16      16   fixed64 base key high, fixed64 base key low
//    32       8   fixed64 base size (the base's content length)
//    40           the appended bytes, to the end of the file
//
// The object's key is XXH3-128 of the whole content (the base's content,
// then the appended bytes), like any other object's: keys, checkpoints,
// diffs and exports see whole contents. Its first writer raises the
// store's VERSION to kStoreVersionAppend, so that a guard that does not
// know the kind refuses the store instead of finding the key missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/blob_key.h"
#include "common/coding.h"

namespace guard {

inline constexpr char kAppendMagic[8] = {'g', 'u', 'a', 'r', 'd', 'a', 'p', 'p'};
inline constexpr uint32_t kAppendFormatVersion = 1;
inline constexpr size_t kAppendHeaderSize = 40;
// Reading an append object reads its chain of bases; past this depth the
// writer stores the whole content instead, which bounds a read's work.
inline constexpr uint32_t kAppendMaxDepth = 16;
// A base smaller than this is copied whole rather than chained: the chain
// would cost more opens than it saves bytes.
inline constexpr uint64_t kAppendMinBase = 256 * 1024;

struct AppendHeader {
  uint32_t version = kAppendFormatVersion;
  uint32_t depth = 1;
  BlobKey base;
  uint64_t base_size = 0;
};

inline std::string EncodeAppendHeader(const AppendHeader& h) {
  std::string out(kAppendMagic, sizeof kAppendMagic);
  PutFixed32(&out, h.version);
  PutFixed32(&out, h.depth);
  PutFixed64(&out, h.base.high);
  PutFixed64(&out, h.base.low);
  PutFixed64(&out, h.base_size);
  return out;
}

// False when `p` (kAppendHeaderSize bytes) is not a header this version
// reads: another magic, a newer format version, a depth out of range.
inline bool DecodeAppendHeader(const char* p, AppendHeader* h) {
  for (size_t i = 0; i < sizeof kAppendMagic; ++i)
    if (p[i] != kAppendMagic[i]) return false;
  h->version = DecodeFixed32(p + 8);
  h->depth = DecodeFixed32(p + 12);
  h->base.high = DecodeFixed64(p + 16);
  h->base.low = DecodeFixed64(p + 24);
  h->base_size = DecodeFixed64(p + 32);
  return h->version == kAppendFormatVersion && h->depth >= 1 && h->depth <= kAppendMaxDepth;
}

}  // namespace guard
