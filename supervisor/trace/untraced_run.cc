#include "supervisor/trace/untraced_run.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <fstream>
#include <string>

#include "common/clock.h"
#include "supervisor/trace/signal_relay.h"

namespace bp = boost::process;

namespace guard {
namespace {

// As the tracer's (tracer.cc): lets the exits already on their way be
// reaped before saying that others still run.
constexpr int64_t kMainEndGraceNs = 300 * 1000 * 1000;

// Runs in the forked child, before execve: the command dies with the
// supervisor's thread that started it, as PTRACE_O_EXITKILL makes every
// tracee die with the tracer (what it started itself does not: no tracer
// holds those; docs/security.md, "--mode preload").
struct DieWithSupervisor : boost::process::extend::handler {
  pid_t supervisor;
  template <typename Executor>
  void on_exec_setup(Executor&) const {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != supervisor) _exit(126);  // it died before the prctl
  }
};

}  // namespace

size_t CountOwnChildren() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/children");
    std::string pid;
    while (in >> pid) ++n;
  }
  closedir(d);
  return n;
}

Status UntracedRun::Start(const LaunchSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command given");
  std::string resolved;
  GUARD_RETURN_IF_ERROR(ResolveCommand(spec.argv[0], &resolved));
  // Before the fork: what the command leaves behind is reparented here.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return Status::FromErrno("PR_SET_CHILD_SUBREAPER", errno);
  bp::environment env = boost::this_process::environment();
  for (const std::string& kv : spec.env_overrides) {
    size_t eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  try {
    // Boost.Process's constructor returns once the exec happened, and
    // throws with its errno when it failed.
    DieWithSupervisor die;
    die.supervisor = getpid();
    bp::child c(bp::exe = boost::filesystem::path(resolved), bp::args = args, env, die);
    pid_ = c.id();
    c.detach();
  } catch (const bp::process_error& e) {
    return Status::FromErrno(spec.argv[0], e.code().value());
  } catch (const std::exception& e) {
    return Status::IOError(spec.argv[0] + ": " + e.what());
  }
  return Status::Ok();
}

Status UntracedRun::Run(int* main_status) {
  bool main_running = true;
  bool stopped = false;
  int64_t main_end_due_ns = 0;
  for (;;) {
    if (main_end_due_ns != 0 && MonoNowNs() >= main_end_due_ns) {
      main_end_due_ns = 0;
      if (on_main_end) on_main_end(*main_status, CountOwnChildren());
    }
    int status = 0;
    int flags = __WALL | WUNTRACED | WCONTINUED | (main_end_due_ns != 0 ? WNOHANG : 0);
    pid_t pid = waitpid(-1, &status, flags);
    if (pid < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) break;
      return Status::FromErrno("waitpid", errno);
    }
    if (pid == 0) {
      usleep(500);
      continue;
    }
    if (pid != pid_) continue;  // one the command left behind, reaped
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      *main_status = status;
      main_running = false;
      if (on_main_end) main_end_due_ns = MonoNowNs() + kMainEndGraceNs;
    } else if (WIFSTOPPED(status) && !stopped) {
      stopped = true;
      if (on_stop) on_stop(WSTOPSIG(status));
      else StopLike(WSTOPSIG(status));
    } else if (WIFCONTINUED(status) && stopped) {
      stopped = false;
      if (on_continue) on_continue();
    }
  }
  if (main_running) return Status::IOError("the command's process was never reaped");
  return Status::Ok();
}

}  // namespace guard
