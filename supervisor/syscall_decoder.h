// Turns the registers of a syscall stopped by the filter into a
// MutationRequest: which file operation is asked for, on which raw paths.
// Architecture-specific register access lives in syscall_regs.h.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace guard {

struct MutationRequest {
  enum class Action {
    kOpen,       // open/openat/openat2/creat with write, create or truncate flags
    kTruncate,   // truncate(path)
    kFtruncate,  // ftruncate(fd)
    kRename,     // rename/renameat/renameat2
    kUnlink,     // unlink, unlinkat without AT_REMOVEDIR
    kRmdir,      // rmdir, unlinkat with AT_REMOVEDIR
    kMkdir,
    kSymlink,    // path = link path, target = text
    kLink,       // path = existing, path2 = new name
    kChmod,      // chmod, fchmodat, fchmodat2
    kFchmod,     // fchmod(fd)
    kMknod,
  };
  Action action = Action::kOpen;
  const char* syscall = "";
  int dirfd = -100;  // AT_FDCWD
  std::string path;
  int dirfd2 = -100;
  std::string path2;
  std::string target;   // kSymlink
  int fd = -1;          // kFtruncate, kFchmod
  uint64_t flags = 0;   // open flags, renameat2 flags, *at flags
  uint32_t mode = 0;    // open/mkdir/mknod/chmod mode
};

// Decodes syscall `nr` with `args` made by `tid`. Returns kUnsupported for a
// syscall that is not a mutation guard knows (it then lets it run).
Status DecodeMutation(pid_t tid, long nr, const uint64_t args[6], MutationRequest* out);

}  // namespace guard
