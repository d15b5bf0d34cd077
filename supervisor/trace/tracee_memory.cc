#include "supervisor/trace/tracee_memory.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_io.h"

namespace guard {
namespace {

constexpr size_t kPage = 4096;

ssize_t ReadChunk(pid_t tid, uint64_t addr, char* buf, size_t n) {
  iovec local{buf, n};
  iovec remote{reinterpret_cast<void*>(addr), n};
  ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
  if (got >= 0 || (errno != EPERM && errno != ENOSYS)) return got;
  // process_vm_readv can be refused where /proc/TID/mem is not (e.g. some LSMs).
  UniqueFd mem;
  if (!OpenFile("/proc/" + std::to_string(tid) + "/mem", O_RDONLY, 0, &mem).ok()) return -1;
  return GUARD_EINTR_RETRY(pread(mem.get(), buf, n, static_cast<off_t>(addr)));
}

}  // namespace

Status ReadTraceeString(pid_t tid, uint64_t addr, std::string* out) {
  out->clear();
  if (addr == 0) return Status::FromErrno("path argument", EFAULT);
  char buf[kPage];
  while (out->size() < PATH_MAX) {
    size_t chunk = kPage - (addr % kPage);
    ssize_t got = ReadChunk(tid, addr, buf, chunk);
    if (got <= 0) return Status::FromErrno("reading the tracee's memory", got < 0 ? errno : EFAULT);
    const void* nul = memchr(buf, '\0', static_cast<size_t>(got));
    if (nul != nullptr) {
      out->append(buf, static_cast<const char*>(nul) - buf);
      // As the kernel's getname(): PATH_MAX bytes with the NUL, at most.
      if (out->size() >= PATH_MAX) break;
      return Status::Ok();
    }
    out->append(buf, static_cast<size_t>(got));
    addr += static_cast<uint64_t>(got);
  }
  return Status::FromErrno("path argument", ENAMETOOLONG);
}

Status ReadTraceeBytes(pid_t tid, uint64_t addr, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = ReadChunk(tid, addr, p, n);
    if (got <= 0) return Status::FromErrno("reading the tracee's memory", got < 0 ? errno : EFAULT);
    p += got;
    addr += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return Status::Ok();
}

}  // namespace guard
