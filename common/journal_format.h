// The journal's physical format: a file header, then a stream of fixed-size
// blocks holding checksummed fragments of logical records. Modelled on LevelDB's
// db/log_format.h; specified in docs/format.md ("Journal").
//
//   file   := header(16) block*
//   header := magic "GUARDJNL" (8) | major u16 LE | minor u16 LE | block_size u32 LE
//   block  := fragment* trailer?          (block_size bytes; the last may be short)
//   fragment := checksum u64 LE | length u16 LE | type u8 | payload[length]
//   checksum := XXH3_64bits over (type, length LE, payload)
//   trailer  := < kFragmentHeaderSize zero bytes that end a block
//
// A logical record too large for what is left of a block is split into a FIRST,
// MIDDLE* and LAST fragment; one that fits is a single FULL fragment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace guard::journal {

inline constexpr char kMagic[8] = {'G', 'U', 'A', 'R', 'D', 'J', 'N', 'L'};
inline constexpr uint16_t kMajorVersion = 1;  // a reader refuses a larger major
inline constexpr uint16_t kMinorVersion = 5;  // a reader accepts any minor (1.1: post-images, 1.2: marks,
                                              // 1.3: operations recorded after they ran, 1.4: the
                                              // `incomplete` record and kept unnamed pre-images,
                                              // 1.5: changes observed after they happened, the `thinned` record, kinds 65-127 skipped)
inline constexpr size_t kFileHeaderSize = 16;
inline constexpr uint32_t kBlockSize = 32768;
// checksum (8) + length (2) + type (1)
inline constexpr size_t kFragmentHeaderSize = 11;

enum FragmentType : uint8_t {
  // Zero is reserved for preallocated or zero-filled space: never written.
  kZeroType = 0,
  kFullType = 1,
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr uint8_t kMaxFragmentType = kLastType;

// The checksum of a fragment of `type` holding `payload`: XXH3_64bits over
// (type, length u16 LE, payload). The one definition the writer and the
// reader share. payload.size() fits in the u16 length field.
uint64_t FragmentChecksum(uint8_t type, std::string_view payload);

}  // namespace guard::journal
