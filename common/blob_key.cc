#include "common/blob_key.h"

#include <xxhash.h>

#include <memory>

#include "common/file_io.h"

namespace guard {

std::string BlobKey::Hex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(high >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(low >> (4 * i)) & 0xf];
  }
  return out;
}

bool BlobKey::FromHex(std::string_view hex, BlobKey* out) {
  if (hex.size() != 32) return false;
  uint64_t parts[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    char c = hex[i];
    uint64_t v;
    if (c >= '0' && c <= '9') v = static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v = static_cast<uint64_t>(c - 'a' + 10);
    else return false;
    parts[i / 16] = (parts[i / 16] << 4) | v;
  }
  out->high = parts[0];
  out->low = parts[1];
  return true;
}

BlobKey BlobKey::OfBytes(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  return BlobKey{h.high64, h.low64};
}

Status BlobKey::OfFd(int fd, std::string_view what, BlobKey* out) {
  constexpr size_t kChunk = 1 << 18;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  if (!state || XXH3_128bits_reset(state.get()) != XXH_OK) return Status::IOError("xxh3 state");
  for (off_t off = 0;;) {
    size_t got = 0;
    GUARD_RETURN_IF_ERROR(PreadFull(fd, buf.get(), kChunk, off, &got, what));
    XXH3_128bits_update(state.get(), buf.get(), got);
    if (got < kChunk) break;
    off += static_cast<off_t>(got);
  }
  XXH128_hash_t h = XXH3_128bits_digest(state.get());
  *out = BlobKey{h.high64, h.low64};
  return Status::Ok();
}

}  // namespace guard
