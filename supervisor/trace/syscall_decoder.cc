#include "supervisor/trace/syscall_decoder.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/file_io.h"
#include "common/syscall_table.h"
#include "supervisor/trace/acl_mode.h"
#include "supervisor/trace/tracee_memory.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

constexpr size_t kXattrSizeMax = 65536;  // XATTR_SIZE_MAX: the kernel fails larger values

Action ActionOf(unsigned char action) {
  switch (action) {
#define GUARD_ACTION_CASE(x) \
  case GUARD_ACTION_##x:     \
    return Action::k##x;
    GUARD_SYSCALL_ACTIONS(GUARD_ACTION_CASE)
#undef GUARD_ACTION_CASE
  }
  return Action::kOpen;  // GUARD_ACTION_None: never asked for
}

int AsFd(uint64_t v) { return static_cast<int>(static_cast<int32_t>(v)); }

Status Str(pid_t tid, uint64_t addr, std::string* out) { return ReadTraceeString(tid, addr, out); }

// The setxattr family sets a mode only through the access ACL: any other
// name is no mutation guard records (Unsupported, and the call runs). The
// check is here, on the name, because the filter cannot read strings.
// `value`, `size`: the ACL, whose permission bits become r->mode.
Status DecodeAclWrite(pid_t tid, uint64_t name_addr, uint64_t value, uint64_t size, MutationRequest* r) {
  std::string name;
  GUARD_RETURN_IF_ERROR(Str(tid, name_addr, &name));
  if (name != kAclAccessXattr) return Status::Unsupported("setxattr of " + name);
  r->mode = kAclModeUnknown;
  if (size <= kXattrSizeMax) {
    std::vector<unsigned char> acl(size);
    uint32_t bits;
    if (size > 0 && ReadTraceeBytes(tid, value, acl.data(), acl.size()).ok() &&
        AclPermissionBits(acl.data(), acl.size(), &bits)) {
      r->mode = bits;
    }
  }
  return Status::Ok();
}

// The umask of `tid` (the "Umask:" line of /proc/TID/status), 022 when it
// cannot be read: the mode a socket's file gets from bind(2) depends on it.
mode_t UmaskOf(pid_t tid) {
  std::string status;
  if (!ReadFileToString("/proc/" + std::to_string(tid) + "/status", &status).ok()) return 022;
  size_t at = status.find("\nUmask:\t");
  if (at == std::string::npos) return 022;
  return static_cast<mode_t>(std::strtoul(status.c_str() + at + 8, nullptr, 8)) & 0777;
}

// bind(2) of a unix socket to a path makes a socket file there; other
// families, abstract names (a leading NUL) and autobind (no path) make none.
// The path and the socket file's mode from the sockaddr of `size` bytes.
Status DecodeSocketPath(pid_t tid, uint64_t sockaddr, uint64_t size, MutationRequest* r) {
  constexpr size_t kPathAt = offsetof(sockaddr_un, sun_path);
  size_t len = size < sizeof(sockaddr_un) ? static_cast<size_t>(size) : sizeof(sockaddr_un);
  if (len <= kPathAt) return Status::Unsupported("bind without a path");
  sockaddr_un addr{};
  // A bad address fails the call with EFAULT by itself, having made nothing.
  if (!ReadTraceeBytes(tid, sockaddr, &addr, len).ok()) return Status::Unsupported("bind: unreadable address");
  if (addr.sun_family != AF_UNIX || addr.sun_path[0] == '\0') return Status::Unsupported("bind without a path");
  r->path.assign(addr.sun_path, strnlen(addr.sun_path, len - kPathAt));
  r->mode = S_IFSOCK | (0777 & ~UmaskOf(tid));
  return Status::Ok();
}

// openat2 keeps its flags and mode in a struct open_how of `size` bytes,
// read as far as it goes (an older program's is smaller; the rest counts as
// zero). One that only reads changes nothing: Unsupported, and it runs.
Status DecodeOpenHow(pid_t tid, uint64_t addr, uint64_t size, MutationRequest* r) {
  open_how how{};
  GUARD_RETURN_IF_ERROR(ReadTraceeBytes(tid, addr, &how, size < sizeof how ? size : sizeof how));
  r->flags = how.flags, r->mode = static_cast<uint32_t>(how.mode);
  if ((how.flags & GUARD_OPEN_WRITE_FLAGS) == 0) return Status::Unsupported("read-only openat2");
  return Status::Ok();
}

// setxattrat(dirfd, path, at_flags, name, struct xattr_args*, size): the
// value's address and size are in the struct {value, size, flags}.
Status ReadXattrArgs(pid_t tid, uint64_t addr, uint64_t size, uint64_t* value, uint64_t* value_size) {
  struct {
    uint64_t value;
    uint32_t size, flags;
  } xa{};
  if (size < sizeof xa) return Status::Unsupported("setxattrat with a short xattr_args: EINVAL");
  GUARD_RETURN_IF_ERROR(ReadTraceeBytes(tid, addr, &xa, sizeof xa));
  *value = xa.value, *value_size = xa.size;
  return Status::Ok();
}

}  // namespace

Status DecodeMutation(pid_t tid, long nr, const uint64_t a[6], MutationRequest* r) {
  *r = MutationRequest();
  const guard_syscall* call = guard_syscall_find(nr);
  if (call == nullptr || call->action == GUARD_ACTION_None) {
    return Status::Unsupported("syscall " + std::to_string(nr) + " is not a mutation guard decodes");
  }
  // The argument with a role (common/syscall_table.h), or -1.
  auto at = [call](char role) { return guard_syscall_arg(call, role); };
  r->action = ActionOf(call->action), r->syscall = call->name;
  if (int i = at('d'); i >= 0) r->dirfd = AsFd(a[i]);
  if (int i = at('D'); i >= 0) r->dirfd2 = AsFd(a[i]);
  if (int i = at('f'); i >= 0) r->fd = AsFd(a[i]);
  if (int i = at('m'); i >= 0) r->mode = static_cast<uint32_t>(a[i]);
  r->flags = call->fixed_flags;
  if (int i = at('o'); i >= 0) r->flags |= a[i];
  if (r->action == Action::kUnlink && (r->flags & AT_REMOVEDIR)) r->action = Action::kRmdir;
  if (int i = at('h'); i >= 0) GUARD_RETURN_IF_ERROR(DecodeOpenHow(tid, a[i], a[at('z')], r));
  if (int i = at('s'); i >= 0) GUARD_RETURN_IF_ERROR(DecodeSocketPath(tid, a[i], a[at('z')], r));
  if (int i = at('x'); i >= 0) {
    uint64_t value = 0, size = 0;
    if (int v = at('v'); v >= 0) {
      value = a[v], size = a[at('z')];
    } else {
      GUARD_RETURN_IF_ERROR(ReadXattrArgs(tid, a[at('a')], a[at('z')], &value, &size));
    }
    GUARD_RETURN_IF_ERROR(DecodeAclWrite(tid, a[i], value, size, r));
  }
  if (int i = at('t'); i >= 0) GUARD_RETURN_IF_ERROR(Str(tid, a[i], &r->target));
  if (int i = at('p'); i >= 0) GUARD_RETURN_IF_ERROR(Str(tid, a[i], &r->path));
  if (int i = at('P'); i >= 0) GUARD_RETURN_IF_ERROR(Str(tid, a[i], &r->path2));
  return Status::Ok();
}

}  // namespace guard
