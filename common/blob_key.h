// BlobKey: the XXH3-128 hash of a blob's uncompressed content, its name in the
// content-addressed store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace guard {

struct BlobKey {
  uint64_t high = 0;
  uint64_t low = 0;

  // 32 lowercase hex digits, high then low, as XXH128_canonical_t prints.
  std::string Hex() const;
  static bool FromHex(std::string_view hex, BlobKey* out);
  static BlobKey OfBytes(std::string_view data);
  // The key of the content of open file `fd`, read by pread from offset 0
  // to its end in bounded memory; `what` names it in errors.
  static Status OfFd(int fd, std::string_view what, BlobKey* out);
  bool operator==(const BlobKey&) const = default;
};

}  // namespace guard
