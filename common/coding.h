// Byte coding for the on-disk formats, one definition for every writer and
// reader (as LevelDB's util/coding.h):
//  - fixed-width little-endian integers (the journal's file and fragment
//    headers, a blob key inside a record), written byte by byte so that the
//    host's byte order and alignment never matter;
//  - varints and zigzag, as used by the journal's record encoding
//    (docs/format.md (Part I), "Integers"). A varint is an unsigned 64-bit
//    value written 7 bits at a time, least significant group first, with the
//    high bit of each byte set on every byte but the last (the protobuf /
//    LevelDB form). A signed value is zigzagged first so that small negatives
//    stay short.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace guard {

// ---- Fixed width, little-endian ----
// Encode* write exactly 2, 4 or 8 bytes at dst; Decode* read as many at p.

inline void EncodeFixed16(char* dst, uint16_t v) {
  for (int i = 0; i < 2; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}

inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}

inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}

inline void PutFixed16(std::string* out, uint16_t v) {
  char buf[2];
  EncodeFixed16(buf, v);
  out->append(buf, sizeof buf);
}

inline void PutFixed32(std::string* out, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  out->append(buf, sizeof buf);
}

inline void PutFixed64(std::string* out, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  out->append(buf, sizeof buf);
}

inline uint16_t DecodeFixed16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}

inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

// ---- Varints and zigzag ----

inline constexpr size_t kMaxVarint64Bytes = 10;

inline void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline size_t Varint64Length(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Reads one varint from the front of *in and removes it. Returns false,
// leaving *in unspecified, when the input ends inside the varint or the value
// does not fit in 64 bits (an 11th byte, or a 10th byte above 1). Overlong
// encodings of small values ("0x80 0x00") are accepted: only the value counts.
inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (size_t i = 0; i < kMaxVarint64Bytes && i < in->size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>((*in)[i]);
    if (i == kMaxVarint64Bytes - 1 && byte > 1) return false;  // bits past 63
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}

// Zigzag maps 0, -1, 1, -2, ... to 0, 1, 2, 3, ... Done on unsigned values so
// that no shift or negation can overflow.
inline uint64_t ZigZagEncode(int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  return (u << 1) ^ (0 - (u >> 63));
}

inline int64_t ZigZagDecode(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (0 - (u & 1)));
}

}  // namespace guard
