#include "supervisor/trace/acl_mode.h"

#include <cstring>

namespace guard {
namespace {

// include/uapi/linux/posix_acl_xattr.h and posix_acl.h.
constexpr uint32_t kVersion = 2;
constexpr uint16_t kUserObj = 0x01, kGroupObj = 0x04, kMask = 0x10, kOther = 0x20;
constexpr size_t kHeader = 4, kEntry = 8;

}  // namespace

bool AclPermissionBits(const void* value, size_t size, uint32_t* bits) {
  const unsigned char* p = static_cast<const unsigned char*>(value);
  if (size < kHeader || (size - kHeader) % kEntry != 0) return false;
  uint32_t version;
  std::memcpy(&version, p, sizeof version);
  if (version != kVersion) return false;
  int user = -1, group = -1, mask = -1, other = -1;
  for (size_t off = kHeader; off < size; off += kEntry) {
    uint16_t tag, perm;
    std::memcpy(&tag, p + off, sizeof tag);
    std::memcpy(&perm, p + off + 2, sizeof perm);
    perm &= 7;
    if (tag == kUserObj) user = perm;
    else if (tag == kGroupObj) group = perm;
    else if (tag == kMask) mask = perm;
    else if (tag == kOther) other = perm;
  }
  if (user < 0 || group < 0 || other < 0) return false;
  *bits = static_cast<uint32_t>(user << 6 | (mask >= 0 ? mask : group) << 3 | other);
  return true;
}

}  // namespace guard
