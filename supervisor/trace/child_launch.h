// Launching the command under ptrace.
//
// The command is started with Boost.Process. Its child side (before exec)
// reports its pid through a pipe and stops itself; the supervisor's tracer
// thread then PTRACE_SEIZEs it with the options that follow every fork, vfork,
// clone and exec, and lets it go on: the child installs the seccomp filter
// (with PR_SET_NO_NEW_PRIVS) and execs. So no instruction of the command runs
// untraced or unfiltered. Boost.Process's constructor blocks until the exec,
// which can only happen after the seize, so it runs on a launcher thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "supervisor/trace/seccomp_filter.h"

namespace guard {

struct LaunchSpec {
  std::vector<std::string> argv;
  // NAME=VALUE entries set in (or replacing those of) guard's own environment.
  std::vector<std::string> env_overrides;
  const FilterProgram* filter = nullptr;
  // Non-empty: the command runs with this directory (guard's state, absolute
  // and canonical) out of its reach (state_isolation.h).
  std::string hide_state_dir;
  bool hide_state_required = false;  // a kernel without user namespaces fails the launch
  std::string hide_also_dir;         // made read-only with it (guard's configuration directory)
  std::string hide_ring;             // the shim's ring: the one segment of the command's /dev/shm
  // Non-empty (under the tracer): every session's inbox is hidden under
  // hide_inbox_root, the command's own reached by the fd inbox_fd only
  // (StateIsolation::HideInboxes).
  std::string hide_inbox_root;
  std::string own_inbox;
  int inbox_fd = -1;
};

// How the launch went for the state directory's isolation.
struct IsolationOutcome {
  bool isolated = false;
  int refused = 0;  // the kernel's errno when it has no user namespaces for us
};

class TracedChild {
 public:
  // Starts the command; on success the child is seized and running toward
  // its exec. Must be called on the thread that will trace it.
  static Status Start(const LaunchSpec& spec, std::unique_ptr<TracedChild>* out);
  ~TracedChild();

  pid_t pid() const { return pid_; }
  const IsolationOutcome& isolation() const { return isolation_; }
  // Joins the launcher thread; call once the child has exec'd or exited.
  // Returns the launch error, if Boost.Process reported one (exec failed).
  Status FinishLaunch();

 private:
  TracedChild() = default;
  pid_t pid_ = -1;
  IsolationOutcome isolation_;
  std::thread launcher_;
  std::shared_ptr<Status> launch_error_;
};

// Finds `name` as execvp would (a name with a slash is taken as it is);
// kNotFound "NAME: command not found" otherwise.
Status ResolveCommand(const std::string& name, std::string* path);

// The ptrace options guard sets on every tracee.
long TraceOptions();

}  // namespace guard
