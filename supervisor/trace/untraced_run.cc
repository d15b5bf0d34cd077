#include "supervisor/trace/untraced_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "supervisor/trace/signal_relay.h"
#include "supervisor/trace/signal_scope.h"
#include "supervisor/trace/state_isolation.h"

namespace guard {
namespace {

// As the tracer's (tracer.cc): lets the exits already on their way be
// reaped before saying that others still run.
constexpr int64_t kMainEndGraceNs = 300 * 1000 * 1000;

}  // namespace

namespace {

// A child with no exit signal (field 38 of /proc/PID/stat is 0) is one
// waitpid without __WALL does not wait for: the session's keeper
// (session/session_keeper.h), no process of the session.
bool IsQuietChild(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = stat.rfind(')');
  if (at == std::string::npos) return false;
  // Fields 3 to 38 follow the name: the exit signal is the 36th of them.
  std::istringstream fields(stat.substr(at + 1));
  std::string field;
  for (int i = 0; i < 36 && fields >> field; ++i) {
  }
  return field == "0";
}

}  // namespace

size_t CountOwnChildren() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/children");
    std::string pid;
    while (in >> pid) n += IsQuietChild(pid) ? 0 : 1;
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
  // Everything the child needs is made now: after fork it may only make
  // async-signal-safe calls (the supervisor has other threads).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const std::string& o : spec.env_overrides) replaced |= o.compare(0, name.size() + 1, name + "=") == 0;
    if (!replaced) env_strings.push_back(std::move(kv));
  }
  env_strings.insert(env_strings.end(), spec.env_overrides.begin(), spec.env_overrides.end());
  std::vector<char*> envp, argv;
  for (std::string& kv : env_strings) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int go[2], result[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  go_.reset(go[1]);
  UniqueFd go_read(go[0]);
  if (pipe2(result, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  result_.reset(result[0]);
  UniqueFd result_write(result[1]);
  StateIsolation isolation;
  if (!spec.hide_state_dir.empty()) isolation = StateIsolation::For(spec.hide_state_dir, spec.hide_state_required, spec.hide_also_dir, spec.hide_ring);
  GUARD_RETURN_IF_ERROR(isolation.OpenChannel());
  const pid_t supervisor = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status::FromErrno("fork", errno);
  if (pid == 0) {
    // The command dies with the supervisor's thread that started it, as
    // PTRACE_O_EXITKILL makes every tracee die with the tracer (what it
    // starts itself does not: docs/security.md, "--mode preload").
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != supervisor) _exit(126);  // it died before the prctl
    if (isolation.EnterInChild() < 0) _exit(126);
    // No tracer refuses a signal to guard here: the kernel does, where it
    // can (signal_scope.h). Refused (an older kernel, no namespace): as
    // before, and the session's log says so.
    (void)EnterSignalScope();
    // A change of credentials may clear the death signal: set it again.
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != supervisor) _exit(126);
    // Wait for Go(): the front relays signals only once it has the pid.
    char byte;
    if (read(go_read.get(), &byte, 1) != 1) _exit(126);
    execve(resolved.c_str(), argv.data(), envp.data());
    int err = errno;
    (void)!write(result_write.get(), &err, sizeof err);
    _exit(err == ENOENT ? 127 : 126);
  }
  isolation.CloseChildEnds();
  if (Status served = isolation.Serve(pid, &isolation_.isolated, &isolation_.refused); !served.ok()) {
    kill(pid, SIGKILL);
    int status;
    (void)waitpid(pid, &status, 0);
    return served;
  }
  pid_ = pid;
  argv0_ = spec.argv[0];
  return Status::Ok();
}

Status UntracedRun::Go() {
  char byte = 1;
  if (write(go_.get(), &byte, 1) != 1) return Status::FromErrno("starting the command", errno);
  go_.reset();
  // EOF: the exec happened (the pipe is close-on-exec); else its errno.
  int err = 0;
  ssize_t got;
  do {
    got = read(result_.get(), &err, sizeof err);
  } while (got < 0 && errno == EINTR);
  result_.reset();
  if (got == static_cast<ssize_t>(sizeof err)) {
    int status;
    (void)waitpid(pid_, &status, 0);
    return Status::FromErrno(argv0_, err);
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
    // Not __WALL: the keeper, a child with no exit signal, is no process
    // of the session (session/session_keeper.h). A process reparented here
    // has SIGCHLD as its exit signal, whatever its parent chose.
    int flags = WUNTRACED | WCONTINUED | (main_end_due_ns != 0 ? WNOHANG : 0);
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
