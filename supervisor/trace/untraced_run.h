// UntracedRun: the command started and waited for without ptrace, for
// --mode preload (the shim alone: docs/capture.md, "Capture modes"). The
// supervisor becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so that
// the processes the command leaves behind come back to it when their
// parents end: Run returns once every one of them has ended, as the
// tracer's Run does. Job control as the tracer's: the command's group-stop
// (Ctrl-Z) is reported to on_stop (or stops guard alike), its continue to
// on_continue.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/trace/child_launch.h"

namespace guard {

class UntracedRun {
 public:
  explicit UntracedRun(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}

  // Makes the command's process (spec.filter is not used), which waits
  // before its exec until Go(): its pid can be handed to the signal relays
  // first, so that a signal it sends its group at once finds them.
  // kNotFound when there is no such program.
  Status Start(const LaunchSpec& spec);
  // Lets it exec; the exec's errno when that failed (the process reaped).
  Status Go();
  pid_t pid() const { return pid_; }
  const IsolationOutcome& isolation() const { return isolation_; }

  // Waits until the command and every process left behind by it have
  // ended; *main_status receives the command's wait status.
  Status Run(int* main_status);

  std::function<void(int sig)> on_stop;
  std::function<void()> on_continue;
  // As Tracer::on_main_end: the command ended and, a short grace later,
  // `remaining` processes it left still run.
  std::function<void(int status, size_t remaining)> on_main_end;

 private:
  std::shared_ptr<spdlog::logger> log_;
  pid_t pid_ = -1;
  IsolationOutcome isolation_;
  std::string argv0_;
  UniqueFd go_, result_;  // Go()'s byte to the child; its exec's errno back
};

// The processes whose parent is this process, counted from
// /proc/self/task/*/children.
size_t CountOwnChildren();

}  // namespace guard
