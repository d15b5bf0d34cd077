#include "supervisor/trace/child_launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <cstring>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/trace/state_isolation.h"

namespace bp = boost::process;

namespace guard {
namespace {

// Runs in the forked child, before execve: only async-signal-safe calls.
struct TraceSetup : bp::extend::handler {
  int pid_fd;
  const FilterProgram* filter;
  const StateIsolation* isolation;

  template <typename Executor>
  void on_exec_setup(Executor&) const {
    // First, untraced: the namespaces' helper is not the command's.
    if (isolation->EnterInChild() < 0) _exit(126);
    pid_t self = getpid();
    // The supervisor reads this pid, waits for the stop, seizes, continues.
    if (write(pid_fd, &self, sizeof self) != sizeof self) _exit(126);
    close(pid_fd);
    raise(SIGSTOP);
    int err = InstallFilter(*filter);
    if (err != 0) {
      static const char kMsg[] = "guard: cannot install the capture filter; not running the command\n";
      (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
      _exit(126);
    }
  }
};

}  // namespace

long TraceOptions() {
  return PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
         PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
}

Status ResolveCommand(const std::string& name, std::string* path) {
  if (name.find('/') != std::string::npos) {
    *path = name;
    return Status::Ok();
  }
  boost::filesystem::path found = bp::search_path(name);
  if (found.empty()) return Status::NotFound(name + ": command not found");
  *path = found.string();
  return Status::Ok();
}

Status TracedChild::Start(const LaunchSpec& spec, std::unique_ptr<TracedChild>* out) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command given");
  std::string resolved;
  GUARD_RETURN_IF_ERROR(ResolveCommand(spec.argv[0], &resolved));
  boost::filesystem::path exe = resolved;
  // Before the fork: a process whose parent ends is reparented here, not to
  // init, so that every process of the session descends from the
  // supervisor (how the ring and the name locks tell a forged owner:
  // common/ring_lineage.h). The tracer reaps them as it reaps its tracees.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return Status::FromErrno("PR_SET_CHILD_SUBREAPER", errno);

  bp::environment env = boost::this_process::environment();
  for (const std::string& kv : spec.env_overrides) {
    size_t eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  UniqueFd read_end(fds[0]);
  auto write_end = std::make_shared<UniqueFd>(fds[1]);

  auto isolation = std::make_shared<StateIsolation>();
  if (!spec.hide_state_dir.empty()) *isolation = StateIsolation::For(spec.hide_state_dir, spec.hide_state_required, spec.hide_also_dir, spec.hide_ring);
  if (isolation->wanted() && !spec.hide_inbox_root.empty()) {
    isolation->HideInboxes(spec.hide_inbox_root, spec.own_inbox, spec.inbox_fd);
  }
  GUARD_RETURN_IF_ERROR(isolation->OpenChannel());

  std::unique_ptr<TracedChild> child(new TracedChild());
  child->launch_error_ = std::make_shared<Status>();
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  TraceSetup setup;
  setup.pid_fd = write_end->get();
  setup.filter = spec.filter;
  setup.isolation = isolation.get();
  auto error = child->launch_error_;
  std::string argv0 = spec.argv[0];
  child->launcher_ = std::thread([exe, args, env, setup, write_end, error, argv0, isolation]() mutable {
    try {
      bp::child c(bp::exe = exe, bp::args = args, env, setup);
      c.detach();
    } catch (const bp::process_error& e) {
      // The exec's errno, so that a missing program exits 127 as in a shell.
      *error = Status::FromErrno(argv0, e.code().value());
    } catch (const std::exception& e) {
      *error = Status::IOError(argv0 + ": " + e.what());
    }
    // A child that never wrote its pid (fork failed) now gives EOF below.
    write_end->reset();
    isolation->CloseChildEnds();
  });

  if (isolation->wanted()) {
    Status served = isolation->Serve(-1, &child->isolation_.isolated, &child->isolation_.refused);
    if (!served.ok()) {
      child->launcher_.join();
      return child->launch_error_->ok() ? served : *child->launch_error_;
    }
  }

  pid_t pid = -1;
  size_t got = 0;
  Status s = ReadFull(read_end.get(), &pid, sizeof pid, &got, "launch pipe");
  if (!s.ok() || got != sizeof pid) {
    child->launcher_.join();
    return child->launch_error_->ok() ? Status::IOError("the command could not be started")
                                      : *child->launch_error_;
  }
  child->pid_ = pid;

  int status = 0;
  if (GUARD_EINTR_RETRY(waitpid(pid, &status, WUNTRACED | __WALL)) != pid || !WIFSTOPPED(status)) {
    child->launcher_.join();
    return Status::IOError("the command's process ended before it could be traced");
  }
  if (ptrace(PTRACE_SEIZE, pid, 0, TraceOptions()) != 0) {
    int err = errno;
    kill(pid, SIGKILL);
    child->launcher_.join();
    return Status::FromErrno("ptrace(PTRACE_SEIZE)", err);
  }
  // Wakes the child from its SIGSTOP; the tracer sees and delivers SIGCONT.
  kill(pid, SIGCONT);
  *out = std::move(child);
  return Status::Ok();
}

Status TracedChild::FinishLaunch() {
  if (launcher_.joinable()) launcher_.join();
  return *launch_error_;
}

TracedChild::~TracedChild() {
  if (launcher_.joinable()) launcher_.join();
}

}  // namespace guard
