// session_launcher.h on Linux: the session's supervisor in a back process
// (trace/front_process.h), tracing the command and loading the shim into it
// (session.h); a mark is the tracer's mark call (trace/mark_call.h), or a
// request over the supervisor's socket (session/mark_channel.h).
#include "supervisor/commands/session_launcher.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/shim_interface.h"
#include "supervisor/base/mark_label.h"
#include "supervisor/commands/session.h"
#include "supervisor/commands/watch_launch.h"
#include "supervisor/session/mark_channel.h"
#include "supervisor/trace/front_process.h"
#include "supervisor/trace/mark_call.h"
#include "supervisor/watch/inotify_source.h"

namespace guard {
namespace {

// GUARD_TEST_WATCH_LAUNCH=1 under --mode watch: the session macOS runs
// (watch_launch.h) with inotify as its source, so that the tests reach
// its code here (tests/e2e/watch_launch_test.cc). Unset (the only case
// outside those tests): the session of session.h.
bool TestWatchLaunch(const RunCommand::Options& options) {
  const char* v = std::getenv("GUARD_TEST_WATCH_LAUNCH");
  return options.mode == "watch" && v != nullptr && std::strcmp(v, "1") == 0;
}

WatchPlatform InotifyPlatform() {
  WatchPlatform platform;
  platform.open_source = [](const std::string& root, const std::vector<std::string>& excluded,
                            std::unique_ptr<WatchSource>* out) {
    std::unique_ptr<InotifySource> source;
    GUARD_RETURN_IF_ERROR(InotifySource::Open(root, excluded, &source));
    *out = std::move(source);
    return Status::Ok();
  };
  return platform;
}

}  // namespace

LaunchOutcome LaunchSession(const RunCommand::Options& options) {
  if (TestWatchLaunch(options)) return LaunchWatchSession(options, InotifyPlatform());
  std::string id;  // set here when guard runs as one process (as PID 1)
  FrontResult front = RunWithFront(options.quiet, [&](FrontLink* link) {
    Session session(options, link);
    int failed = session.Prepare();
    id = session.id();
    if (failed == 0) failed = session.Launch();
    if (failed != 0) return failed;
    session.Run();
    session.HandBack();
    return session.Seal();
  });
  return {front.code, front.session_id.empty() ? id : front.session_id};
}

// From the tracer that stops its call (trace, auto), else over the
// supervisor's socket (preload, watch: session/mark_channel.h). Under the
// shim alone there is no tracer to ask: its call would only be a miss of
// the shim's.
long RequestMark(std::string_view label, bool step) {
  label = CutMarkLabel(label);
  const char* alone = std::getenv(GUARD_ENV_SHIM_ALONE);
  if (alone == nullptr || std::strcmp(alone, "1") != 0) {
    long rc = IssueMarkCall(label, step);
    if (rc != -EFAULT && rc != -ENOSYS) return rc;
  }
  MarkRequest request;
  request.label.assign(label);
  request.step = step;
  return AskForMark(request);
}

}  // namespace guard
