// What a recorded call may change under the root, as the work saver
// (a CallObserver: call_observer.h) is told of it: the paths whose post-images it supersedes.
#pragma once

#include <vector>

#include "common/journal_record.h"
#include "supervisor/capture/call_observer.h"

namespace guard {

// What the call that `r` records may change under the root, for the work
// saver: the paths whose post-images it supersedes. `dir_arrives`: a
// directory enters the root at the inside name; `same` holds the other names
// of a changed inode (kSameInode), which change with it.
ChangedPaths CallOf(const Record& r, bool inside, bool inside2, bool dir_arrives,
                       const std::vector<Record>& same);

}  // namespace guard
