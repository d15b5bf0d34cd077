// Turns the registers of a syscall stopped by the filter into a
// MutationRequest: which file operation is asked for, on which raw paths.
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
