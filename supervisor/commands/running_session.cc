#include "supervisor/commands/running_session.h"

#include <unistd.h>

#include "common/clock.h"
#include "supervisor/base/version.h"
#include "supervisor/git/checkpoint.h"

namespace guard {

Status CreateRunningSession(const std::string& sessions_dir, const std::string& root,
                            const std::vector<std::string>& argv, const std::string& state_dir, SessionMeta* meta,
                            std::string* dir) {
  GUARD_RETURN_IF_ERROR(CreateSessionDir(sessions_dir, meta, dir));
  meta->root = root;
  meta->argv = argv;
  meta->started_ns = WallNowNs();
  meta->state = SessionState::kRunning;
  meta->supervisor_pid = getpid();
  meta->supervisor_start_ticks = ProcessStartTicks(getpid());
  meta->guard_version = kGuardVersion;
  meta->git_head = GitHeadAt(root, state_dir);
  return Status::Ok();
}

}  // namespace guard
