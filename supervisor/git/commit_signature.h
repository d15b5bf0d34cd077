// The author and committer guard writes its commits with: the user's
// (user.name and user.email in git's configuration), as `git commit` would
// use, else "guard <guard@localhost>" so that a checkpoint never fails for
// want of a configured name.
#pragma once

#include "common/status.h"
#include "supervisor/git/git_handles.h"

namespace guard {

Status CommitSignature(git_repository* repo, GitSignature* out);

}  // namespace guard
