#include "supervisor/trace/syscall_decoder.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/file_io.h"
#include "supervisor/trace/acl_mode.h"
#include "supervisor/trace/tracee_memory.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

constexpr long kFchmodat2 = 452;  // Linux 6.6; older headers lack SYS_fchmodat2
constexpr long kSetxattrat = 463;  // Linux 6.13
constexpr size_t kXattrSizeMax = 65536;  // XATTR_SIZE_MAX: the kernel fails larger values

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
Status DecodeBind(pid_t tid, const uint64_t a[6], MutationRequest* r) {
  constexpr size_t kPathAt = offsetof(sockaddr_un, sun_path);
  size_t len = a[2] < sizeof(sockaddr_un) ? static_cast<size_t>(a[2]) : sizeof(sockaddr_un);
  if (len <= kPathAt) return Status::Unsupported("bind without a path");
  sockaddr_un addr{};
  // A bad address fails the call with EFAULT by itself, having made nothing.
  if (!ReadTraceeBytes(tid, a[1], &addr, len).ok()) return Status::Unsupported("bind: unreadable address");
  if (addr.sun_family != AF_UNIX || addr.sun_path[0] == '\0') return Status::Unsupported("bind without a path");
  r->action = Action::kMknod, r->syscall = "bind";
  r->path.assign(addr.sun_path, strnlen(addr.sun_path, len - kPathAt));
  r->mode = S_IFSOCK | (0777 & ~UmaskOf(tid));
  return Status::Ok();
}

}  // namespace

Status DecodeMutation(pid_t tid, long nr, const uint64_t a[6], MutationRequest* r) {
  *r = MutationRequest();
  switch (nr) {
#ifdef SYS_open
    case SYS_open:
      r->action = Action::kOpen, r->syscall = "open", r->flags = a[1], r->mode = static_cast<uint32_t>(a[2]);
      return Str(tid, a[0], &r->path);
#endif
#ifdef SYS_creat
    case SYS_creat:
      r->action = Action::kOpen, r->syscall = "creat", r->flags = O_CREAT | O_WRONLY | O_TRUNC;
      r->mode = static_cast<uint32_t>(a[1]);
      return Str(tid, a[0], &r->path);
#endif
    case SYS_openat:
      r->action = Action::kOpen, r->syscall = "openat", r->dirfd = AsFd(a[0]), r->flags = a[2];
      r->mode = static_cast<uint32_t>(a[3]);
      return Str(tid, a[1], &r->path);
    case SYS_openat2: {
      open_how how{};
      size_t size = a[3] < sizeof how ? a[3] : sizeof how;
      GUARD_RETURN_IF_ERROR(ReadTraceeBytes(tid, a[2], &how, size));
      r->action = Action::kOpen, r->syscall = "openat2", r->dirfd = AsFd(a[0]), r->flags = how.flags;
      r->mode = static_cast<uint32_t>(how.mode);
      if ((how.flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) == 0) {
        return Status::Unsupported("read-only openat2");
      }
      return Str(tid, a[1], &r->path);
    }
    case SYS_truncate:
      r->action = Action::kTruncate, r->syscall = "truncate";
      return Str(tid, a[0], &r->path);
    case SYS_ftruncate:
      r->action = Action::kFtruncate, r->syscall = "ftruncate", r->fd = AsFd(a[0]);
      return Status::Ok();
#ifdef SYS_rename
    case SYS_rename:
      r->action = Action::kRename, r->syscall = "rename";
      GUARD_RETURN_IF_ERROR(Str(tid, a[0], &r->path));
      return Str(tid, a[1], &r->path2);
#endif
#ifdef SYS_renameat
    case SYS_renameat:
#endif
    case SYS_renameat2:
      r->action = Action::kRename, r->syscall = nr == SYS_renameat2 ? "renameat2" : "renameat";
      r->dirfd = AsFd(a[0]), r->dirfd2 = AsFd(a[2]);
      r->flags = nr == SYS_renameat2 ? a[4] : 0;
      GUARD_RETURN_IF_ERROR(Str(tid, a[1], &r->path));
      return Str(tid, a[3], &r->path2);
#ifdef SYS_unlink
    case SYS_unlink:
      r->action = Action::kUnlink, r->syscall = "unlink";
      return Str(tid, a[0], &r->path);
#endif
    case SYS_unlinkat:
      r->syscall = "unlinkat", r->dirfd = AsFd(a[0]), r->flags = a[2];
      r->action = (a[2] & AT_REMOVEDIR) ? Action::kRmdir : Action::kUnlink;
      return Str(tid, a[1], &r->path);
#ifdef SYS_rmdir
    case SYS_rmdir:
      r->action = Action::kRmdir, r->syscall = "rmdir";
      return Str(tid, a[0], &r->path);
#endif
#ifdef SYS_mkdir
    case SYS_mkdir:
      r->action = Action::kMkdir, r->syscall = "mkdir", r->mode = static_cast<uint32_t>(a[1]);
      return Str(tid, a[0], &r->path);
#endif
    case SYS_mkdirat:
      r->action = Action::kMkdir, r->syscall = "mkdirat", r->dirfd = AsFd(a[0]);
      r->mode = static_cast<uint32_t>(a[2]);
      return Str(tid, a[1], &r->path);
#ifdef SYS_symlink
    case SYS_symlink:
      r->action = Action::kSymlink, r->syscall = "symlink";
      GUARD_RETURN_IF_ERROR(Str(tid, a[0], &r->target));
      return Str(tid, a[1], &r->path);
#endif
    case SYS_symlinkat:
      r->action = Action::kSymlink, r->syscall = "symlinkat", r->dirfd = AsFd(a[1]);
      GUARD_RETURN_IF_ERROR(Str(tid, a[0], &r->target));
      return Str(tid, a[2], &r->path);
#ifdef SYS_link
    case SYS_link:
      r->action = Action::kLink, r->syscall = "link";
      GUARD_RETURN_IF_ERROR(Str(tid, a[0], &r->path));
      return Str(tid, a[1], &r->path2);
#endif
    case SYS_linkat:
      r->action = Action::kLink, r->syscall = "linkat", r->dirfd = AsFd(a[0]), r->dirfd2 = AsFd(a[2]);
      r->flags = a[4];
      GUARD_RETURN_IF_ERROR(Str(tid, a[1], &r->path));
      return Str(tid, a[3], &r->path2);
#ifdef SYS_chmod
    case SYS_chmod:
      r->action = Action::kChmod, r->syscall = "chmod", r->mode = static_cast<uint32_t>(a[1]);
      return Str(tid, a[0], &r->path);
#endif
    case SYS_fchmod:
      r->action = Action::kFchmod, r->syscall = "fchmod", r->fd = AsFd(a[0]);
      r->mode = static_cast<uint32_t>(a[1]);
      return Status::Ok();
    case SYS_fchmodat:
    case kFchmodat2:
      r->action = Action::kChmod, r->syscall = nr == SYS_fchmodat ? "fchmodat" : "fchmodat2";
      r->dirfd = AsFd(a[0]), r->mode = static_cast<uint32_t>(a[2]);
      r->flags = nr == SYS_fchmodat ? 0 : a[3];
      return Str(tid, a[1], &r->path);
#ifdef SYS_mknod
    case SYS_mknod:
      r->action = Action::kMknod, r->syscall = "mknod", r->mode = static_cast<uint32_t>(a[1]);
      return Str(tid, a[0], &r->path);
#endif
    case SYS_mknodat:
      r->action = Action::kMknod, r->syscall = "mknodat", r->dirfd = AsFd(a[0]);
      r->mode = static_cast<uint32_t>(a[2]);
      return Str(tid, a[1], &r->path);
#ifdef SYS_chown
    case SYS_chown:
      r->action = Action::kChown, r->syscall = "chown";
      return Str(tid, a[0], &r->path);
#endif
#ifdef SYS_lchown
    case SYS_lchown:
      r->action = Action::kChown, r->syscall = "lchown", r->flags = AT_SYMLINK_NOFOLLOW;
      return Str(tid, a[0], &r->path);
#endif
    case SYS_fchownat:
      r->action = Action::kChown, r->syscall = "fchownat", r->dirfd = AsFd(a[0]), r->flags = a[4];
      return Str(tid, a[1], &r->path);
    case SYS_fchown:
      r->action = Action::kFchown, r->syscall = "fchown", r->fd = AsFd(a[0]);
      return Status::Ok();
    case SYS_setxattr:
    case SYS_lsetxattr:
      r->action = Action::kSetAcl, r->syscall = nr == SYS_setxattr ? "setxattr" : "lsetxattr";
      r->flags = nr == SYS_lsetxattr ? AT_SYMLINK_NOFOLLOW : 0;
      GUARD_RETURN_IF_ERROR(DecodeAclWrite(tid, a[1], a[2], a[3], r));
      return Str(tid, a[0], &r->path);
    case SYS_fsetxattr:
      r->action = Action::kFsetAcl, r->syscall = "fsetxattr", r->fd = AsFd(a[0]);
      return DecodeAclWrite(tid, a[1], a[2], a[3], r);
    case kSetxattrat: {
      // setxattrat(dirfd, path, at_flags, name, struct xattr_args*, size):
      // the value's address and size are in the struct {value, size, flags}.
      struct {
        uint64_t value;
        uint32_t size, flags;
      } xa{};
      r->action = Action::kSetAcl, r->syscall = "setxattrat", r->dirfd = AsFd(a[0]), r->flags = a[2];
      if (a[5] < sizeof xa) return Status::Unsupported("setxattrat with a short xattr_args: EINVAL");
      GUARD_RETURN_IF_ERROR(ReadTraceeBytes(tid, a[4], &xa, sizeof xa));
      GUARD_RETURN_IF_ERROR(DecodeAclWrite(tid, a[3], xa.value, xa.size, r));
      return Str(tid, a[1], &r->path);
    }
    case SYS_bind:
      return DecodeBind(tid, a, r);
    default:
      return Status::Unsupported("syscall " + std::to_string(nr) + " is not a mutation guard decodes");
  }
}

}  // namespace guard
