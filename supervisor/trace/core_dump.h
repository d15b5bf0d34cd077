// The file a fatal signal's core dump will write, predicted at the signal's
// delivery stop, before the kernel acts on the signal.
//
// With core_pattern a file name ("core", the kernel's default, or a path
// with %-specifiers), a process dying of SIGSEGV, SIGABRT and the like with
// RLIMIT_CORE of at least a page makes the kernel unlink that name (relative
// to the process's cwd, beneath its root) and create the dump there, 0600:
// to guard, an open that creates or truncates the file, by no syscall it
// could trap. A pipe pattern ("|/usr/lib/systemd/systemd-coredump ...")
// writes no file.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"
#include "supervisor/capture/mutation.h"

namespace guard {

// True when signal `sig`, about to be delivered to thread `tid`, will make
// the kernel write a core dump to a file: *req is then that write, as an
// open of the pattern's expansion with O_CREAT | O_TRUNC. *why is not ok
// when the name cannot be predicted (%t, the time of the dump, or %d, its
// dumpable mode): the caller treats that as a capture failure.
bool PredictCoreDump(pid_t tid, int sig, MutationRequest* req, Status* why);

// Expands core_pattern `pattern` as the kernel does for a file (without the
// leading '|' of a pipe), from what is known of the dying process; `uses_pid`
// is kernel.core_uses_pid. False, with *why, on a specifier whose value
// guard cannot know ahead (exposed for the unit test).
struct DyingProcess {
  long pid = 0, tid = 0;            // in the process's own pid namespace (%p, %i)
  long global_pid = 0, global_tid = 0;  // %P, %I
  long uid = 0, gid = 0;            // real ids (%u, %g)
  int sig = 0;                      // %s
  std::string comm, exe, hostname;  // %e, %E / %f, %h ("" when unknown)
  unsigned long long core_limit = 0;  // %c
};
bool ExpandCorePattern(const std::string& pattern, bool uses_pid, const DyingProcess& p,
                       std::string* out, Status* why);

}  // namespace guard
