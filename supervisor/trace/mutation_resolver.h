// Turns a decoded request of a stopped tracee into a Mutation: the absolute
// paths of the objects the call will act on, resolved as the kernel will
// resolve them for that process (path_resolver.h), or why they cannot be.
#pragma once

#include <sys/types.h>

#include "common/status.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/trace/path_resolver.h"

namespace guard {

// Fills `out` from `req`, made by `tid`. `decode` is the decoder's status:
// a request that could not be read whole is a capture failure. `ctx`: see
// ResolveTraceePath. out->abs_lstat (abs2_lstat) is the resolution's lstat
// of abs (abs2), where it made one.
void ResolveMutation(pid_t tid, const MutationRequest& req, const Status& decode, Mutation* out,
                     const ResolveContext& ctx = ResolveContext());

}  // namespace guard
