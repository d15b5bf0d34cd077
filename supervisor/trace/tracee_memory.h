// Reading a stopped tracee's memory: NUL-terminated paths and small structs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace guard {

// Reads a NUL-terminated string at `addr` in `tid`: ENAMETOOLONG when it
// does not fit PATH_MAX bytes with its NUL, as the kernel refuses it then.
// Reads page by page so that a string ending just before an unmapped page is
// still read. Falls back to /proc/TID/mem when process_vm_readv is refused.
Status ReadTraceeString(pid_t tid, uint64_t addr, std::string* out);
Status ReadTraceeBytes(pid_t tid, uint64_t addr, void* buf, size_t n);

}  // namespace guard
