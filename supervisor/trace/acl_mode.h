// The permission bits a POSIX access ACL sets when it is written with
// setxattr(system.posix_acl_access): the kernel derives the mode's owner,
// group and other bits from the ACL (the group bits from the mask entry when
// there is one), so such a call changes the mode without a chmod.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace guard {

// The xattr name whose write sets the mode.
inline constexpr std::string_view kAclAccessXattr = "system.posix_acl_access";

// The 0777 bits the ACL in its xattr form (`value`, `size` bytes) sets, or
// false when it is not a well-formed version-2 ACL with the three required
// entries (the kernel then fails the call).
bool AclPermissionBits(const void* value, size_t size, uint32_t* bits);

}  // namespace guard
