// Turns a decoded request of a stopped tracee into a Mutation: the absolute
// paths of the objects the call will act on, resolved as the kernel will
// resolve them for that process (path_resolver.h), or why they cannot be.
#pragma once

#include <sys/types.h>

#include "common/status.h"
#include "supervisor/capture/mutation.h"

namespace guard {

class TreeAnchors;

// Fills `out` from `req`, made by `tid`. `decode` is the decoder's status:
// a request that could not be read whole is a capture failure.
// `anchors`: see ResolveTraceePath.
void ResolveMutation(pid_t tid, const MutationRequest& req, const Status& decode, Mutation* out,
                     const TreeAnchors* anchors = nullptr);

}  // namespace guard
