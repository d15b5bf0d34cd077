// Resolves a path argument of a stopped tracee to the absolute path of the
// object the kernel will act on: relative to the dirfd (/proc/TID/fd/N) or
// the cwd (/proc/TID/cwd), under the process's root (/proc/TID/root), with
// every symlink in the middle followed, and the final component followed
// only when the syscall follows it (open without O_NOFOLLOW, chmod, truncate);
// rename, unlink, rmdir, mkdir, symlink and link act on the link itself.
//
// The result is computed from guard's view of the filesystem an instant
// before the kernel's: another process could change a directory in between.
// That race is inherent to ptrace-based capture and is documented.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace guard {

Status ResolveTraceePath(pid_t tid, int dirfd, const std::string& path, bool follow_last,
                         bool empty_path_ok, std::string* out);
// The path an open fd of the tracee refers to (readlink /proc/TID/fd/FD).
Status TraceeFdPath(pid_t tid, int fd, std::string* out);

}  // namespace guard
