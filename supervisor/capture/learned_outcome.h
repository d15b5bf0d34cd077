// One stop per call: which recorded calls may run past their seccomp stop
// without a syscall-exit stop, and how their outcome is learnt afterwards
// from the tree (docs/capture.md, "One stop per call").
//
// The outcome of such a call is settled when its thread is known to be past
// it: at the thread's next stop of any kind, or its exit. The tree then
// says what the call did, provided nothing else could have changed the
// paths meanwhile: no other call of the session was in flight when it was
// recorded, nor has been stopped since ("quiet"). What is learnt that way
// is certain only in one direction: a path that shows the call's effect
// shows that it happened; anything else leaves it without an outcome, which
// every reader takes as "may have happened" (docs/format.md, Part IV).
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "common/journal_record.h"
#include "supervisor/capture/mutation.h"

namespace guard {

// What a settled call's record says, as far as learning needs it.
struct OneStopCall {
  OpKind kind = OpKind::kCreate;
  uint32_t before_mode = 0;  // kChmod: the mode before
  uint32_t new_mode = 0;     // kChmod: the mode asked for
};

enum class Learned {
  kHappened,  // the tree shows the call's effect
  kUnknown,   // it shows none (the call failed, or did nothing), or cannot tell
};

// Whether the call `r` records (for request `action`; `inside`, `inside2`:
// its paths are under the root) can do without an exit stop: its effect on
// a name is visible in the tree. Not so for an open of an existing file
// (whether it succeeded shows nowhere), exchanges, directory
// moves and calls with carried or same-inode records (their outcome
// settles several records), calls with a path outside the root (guard does
// not look there), nor chown and ACL writes (their mode change is a guess).
bool LearnableFromTree(const Record& r, MutationRequest::Action action, bool inside, bool inside2);

// What a quiet settled call did, from lstat of its path (`now`) and, for a
// rename or link, of its second path (`now2`) once it had run: null when
// the path is absent.
Learned LearnFromTree(const OneStopCall& c, const struct stat* now, const struct stat* now2);

}  // namespace guard
