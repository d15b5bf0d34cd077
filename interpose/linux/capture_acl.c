#include "interpose/linux/capture_acl.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "interpose/linux/capture.h"
#include "interpose/linux/capture_config.h"

/* include/uapi/linux/posix_acl_xattr.h and posix_acl.h, as
 * supervisor/trace/acl_mode.cc reads them. */
enum { kAclVersion = 2, kUserObj = 0x01, kGroupObj = 0x04, kMask = 0x10, kOther = 0x20 };

/* The permission bits the ACL sets; 0, or -1 for a value it cannot read. */
static int acl_bits(const void* value, size_t size, mode_t* bits) {
  const unsigned char* p = (const unsigned char*)value;
  if (p == NULL || size < 4 || (size - 4) % 8 != 0) return -1;
  uint32_t version;
  memcpy(&version, p, sizeof version);
  if (version != kAclVersion) return -1;
  int user = -1, group = -1, mask = -1, other = -1;
  for (size_t off = 4; off < size; off += 8) {
    uint16_t tag, perm;
    memcpy(&tag, p + off, sizeof tag);
    memcpy(&perm, p + off + 2, sizeof perm);
    perm &= 7;
    if (tag == kUserObj) user = perm;
    else if (tag == kGroupObj) group = perm;
    else if (tag == kMask) mask = perm;
    else if (tag == kOther) other = perm;
  }
  if (user < 0 || group < 0 || other < 0) return -1;
  *bits = (mode_t)(user << 6 | (mask >= 0 ? mask : group) << 3 | other);
  return 0;
}

static int is_access(const char* name) { return name != NULL && strcmp(name, "system.posix_acl_access") == 0; }

void shim_capture_setacl(struct shim_call* c, const char* path, int follow, const char* name, const void* value,
                         size_t size) {
  /* A shim that does not capture, above a tracer, makes no host call from
   * the stub: the filter's allowance lets nothing of it past (docs/shim.md,
   * "The interface"). Alone there is no filter to get past. */
  if (c->cls == SHIM_NOTHING || (!shim_config.ready && !shim_config.alone)) return;
  if (!is_access(name)) {
    c->route = SHIM_ROUTE_STUB; /* a default ACL: no mode of the file changes */
    return;
  }
  mode_t bits;
  if (acl_bits(value, size, &bits) != 0) return;
  shim_capture_chmod(c, AT_FDCWD, path, bits, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

void shim_capture_fsetacl(struct shim_call* c, int fd, const char* name, const void* value, size_t size) {
  if (c->cls == SHIM_NOTHING || (!shim_config.ready && !shim_config.alone)) return;
  if (!is_access(name)) {
    c->route = SHIM_ROUTE_STUB;
    return;
  }
  mode_t bits;
  if (acl_bits(value, size, &bits) != 0) return;
  shim_capture_fchmod(c, fd, bits);
}
