#include "common/ring_segment.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstring>

#include "common/os_calls.h"
#include "common/ring_format.h"
#include "common/ring_producer.h"

namespace bip = boost::interprocess;

namespace guard {
namespace {

constexpr char kPrefix[] = "guard-ring-";
constexpr size_t kRandomBytes = 16;  // 128 bits

Status RandomName(std::string* name) {
  unsigned char bytes[kRandomBytes];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = os::Random(bytes + got, sizeof bytes - got, /*nonblock=*/false);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno("ring: getrandom", errno);
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  *name = kPrefix;
  for (unsigned char b : bytes) {
    name->push_back(kHex[b >> 4]);
    name->push_back(kHex[b & 15]);
  }
  return Status::Ok();
}

uint64_t PidNamespaceInode() {
  struct stat st;
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return st.st_ino;
}

Status FromInterprocess(const std::string& what, const bip::interprocess_exception& e) {
  int err = e.get_native_error();
  if (err != 0) return Status::FromErrno(what, err);
  return Status::IOError(what + ": " + e.what());
}

}  // namespace

bool IsRingSegmentName(const std::string& name) {
  const size_t prefix = sizeof kPrefix - 1;
  if (name.size() != prefix + 2 * kRandomBytes || name.compare(0, prefix, kPrefix) != 0) return false;
  for (size_t i = prefix; i < name.size(); ++i) {
    char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status RingSegment::Create(uint64_t capacity, RingSegment* out) {
  if (capacity < GUARD_RING_MIN_CAPACITY || capacity > GUARD_RING_MAX_CAPACITY ||
      (capacity & (capacity - 1)) != 0)
    return Status::InvalidArgument("ring: capacity must be a power of two from 4 KiB to 1 GiB");
  std::string name;
  GUARD_RETURN_IF_ERROR(RandomName(&name));
  const uint64_t size = GUARD_RING_HEADER_SIZE + capacity;
  try {
    // create_only: O_CREAT|O_EXCL, so that a name someone made first is
    // never adopted. Boost sets the mode with fchmod after shm_open, past the
    // umask; glibc's shm_open opens with O_CLOEXEC|O_NOFOLLOW.
    bip::permissions owner_only(0600);
    bip::shared_memory_object shm(bip::create_only, name.c_str(), bip::read_write, owner_only);
    try {
      shm.truncate(static_cast<bip::offset_t>(size));
      bip::mapped_region region(shm, bip::read_write, 0, size);
      // A fresh segment reads as zeros: only the non-zero fields are set.
      // Plain stores: no producer can know the name yet.
      auto* h = static_cast<guard_ring_header*>(region.get_address());
      h->magic = GUARD_RING_MAGIC;
      h->version = GUARD_RING_VERSION;
      h->header_size = GUARD_RING_HEADER_SIZE;
      h->capacity = capacity;
      h->pid_ns = PidNamespaceInode();
      h->tail = GUARD_RING_TAIL(0, GUARD_RING_NO_SLOT);
      out->name_ = name;
      out->region_ = std::move(region);
    } catch (const bip::interprocess_exception& e) {
      bip::shared_memory_object::remove(name.c_str());
      return FromInterprocess("ring: sizing or mapping " + name, e);
    }
  } catch (const bip::interprocess_exception& e) {
    return FromInterprocess("ring: creating " + name, e);
  }
  return Status::Ok();
}

Status RingSegment::Open(const std::string& name, RingSegment* out) {
  if (!IsRingSegmentName(name)) return Status::InvalidArgument("ring: not a ring segment name: " + name);
  try {
    bip::shared_memory_object shm(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t size = 0;
    if (!shm.get_size(size) || size < static_cast<bip::offset_t>(GUARD_RING_HEADER_SIZE))
      return Status::Corruption("ring: segment " + name + " is too small");
    bip::mapped_region region(shm, bip::read_write, 0, static_cast<size_t>(size));
    guard_ring_producer check;
    int rc = guard_ring_producer_init(&check, region.get_address(), region.get_size());
    if (rc == -EPROTO) return Status::Unsupported("ring: segment " + name + " has another format version");
    if (rc != 0) return Status::Corruption("ring: segment " + name + " is not a guard ring");
    out->name_ = name;
    out->region_ = std::move(region);
  } catch (const bip::interprocess_exception& e) {
    return FromInterprocess("ring: opening " + name, e);
  }
  return Status::Ok();
}

Status RingSegment::Remove(const std::string& name) {
  if (!IsRingSegmentName(name)) return Status::InvalidArgument("ring: not a ring segment name: " + name);
  // Boost's remove returns false without saying why; shm_unlink does.
  std::string path = "/" + name;
  if (::shm_unlink(path.c_str()) != 0 && errno != ENOENT)
    return Status::FromErrno("ring: removing " + name, errno);
  return Status::Ok();
}

}  // namespace guard
