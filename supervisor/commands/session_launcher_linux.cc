// session_launcher.h on Linux: the session's supervisor in a back process
// (trace/front_process.h), tracing the command and loading the shim into it
// (session.h); a mark is the tracer's mark call (trace/mark_call.h).
#include "supervisor/commands/session_launcher.h"

#include "supervisor/commands/session.h"
#include "supervisor/trace/front_process.h"
#include "supervisor/trace/mark_call.h"

namespace guard {

LaunchOutcome LaunchSession(const RunCommand::Options& options) {
  std::string id;  // set here when guard runs as one process (as PID 1)
  FrontResult front = RunWithFront(options.quiet, [&](FrontLink* link) {
    Session session(options, link);
    int failed = session.Prepare();
    id = session.id();
    if (failed == 0) failed = session.Launch();
    if (failed != 0) return failed;
    session.Run();
    return session.Seal();
  });
  return {front.code, front.session_id.empty() ? id : front.session_id};
}

long RequestMark(std::string_view label, bool step) { return IssueMarkCall(label, step); }

}  // namespace guard
