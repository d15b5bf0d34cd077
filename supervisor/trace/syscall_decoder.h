// Turns the registers of a syscall stopped by the filter into a
// MutationRequest: which file operation is asked for, on which raw paths.
// The call's row in common/syscall_table.h says which (its action) and
// which argument is which (its args); the few calls that keep arguments in
// memory (openat2, the setxattr family, bind) are read here.
// Architecture-specific register access lives in syscall_regs.h.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "common/status.h"
#include "supervisor/capture/mutation.h"

namespace guard {

// Decodes syscall `nr` with `args` made by `tid`. Returns kUnsupported for a
// syscall that is not a mutation guard knows (it then lets it run).
Status DecodeMutation(pid_t tid, long nr, const uint64_t args[6], MutationRequest* out);

}  // namespace guard
