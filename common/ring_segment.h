// RingSegment: the shared memory that holds a ring (common/ring_format.h),
// created by the supervisor through Boost.Interprocess, mode 0600, under a
// name with 128 random bits so that no other process can guess it. The
// segment outlives the process that made it: if the supervisor dies, recovery
// opens it by name (from the session's metadata), drains it and removes it.
// The shim maps it without Boost: it needs only the name and the layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <boost/interprocess/mapped_region.hpp>

#include "common/status.h"

namespace guard {

class RingSegment {
 public:
  RingSegment() = default;
  RingSegment(RingSegment&&) = default;
  RingSegment& operator=(RingSegment&&) = default;
  RingSegment(const RingSegment&) = delete;
  RingSegment& operator=(const RingSegment&) = delete;
  // Unmaps; the segment itself stays until Remove.
  ~RingSegment() = default;

  // Creates a new segment for a ring of `capacity` data bytes (a power of
  // two, GUARD_RING_MIN_CAPACITY to GUARD_RING_MAX_CAPACITY), writes its
  // header and maps it.
  static Status Create(uint64_t capacity, RingSegment* out);
  // Maps an existing segment by name (recovery) and checks its header.
  static Status Open(const std::string& name, RingSegment* out);
  // Removes the segment's name; mappings of it stay valid until unmapped.
  // A name that is already gone is not an error.
  static Status Remove(const std::string& name);

  // The name to give Open and the shim (no leading '/': shm_open's is
  // "/" + name, and /dev/shm/<name> on Linux).
  const std::string& name() const { return name_; }
  void* base() const { return region_.get_address(); }
  size_t size() const { return region_.get_size(); }
  bool valid() const { return base() != nullptr; }

 private:
  std::string name_;
  boost::interprocess::mapped_region region_;
};

// Whether a string could be a segment name made by Create (checked before a
// name read from a session's metadata is opened or removed).
bool IsRingSegmentName(const std::string& name);

}  // namespace guard
