#include "supervisor/base/tool_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (os::PipeCloexec(fds) != 0) return Status::FromErrno("pipe", errno);
  read_end->reset(fds[0]);
  write_end->reset(fds[1]);
  return Status::Ok();
}

// Reads the child's stdout (if collected) and stderr until both close.
Status Drain(UniqueFd out_fd, UniqueFd err_fd, std::string* out, std::string* err) {
  char buf[65536];
  while (out_fd.valid() || err_fd.valid()) {
    pollfd p[2];
    int n = 0;
    if (out_fd.valid()) p[n++] = {out_fd.get(), POLLIN, 0};
    if (err_fd.valid()) p[n++] = {err_fd.get(), POLLIN, 0};
    if (GUARD_EINTR_RETRY(::poll(p, n, -1)) < 0) return Status::FromErrno("poll", errno);
    for (int i = 0; i < n; ++i) {
      if (p[i].revents == 0) continue;
      bool is_out = out_fd.valid() && p[i].fd == out_fd.get();
      ssize_t got = GUARD_EINTR_RETRY(::read(p[i].fd, buf, sizeof buf));
      if (got < 0) return Status::FromErrno("reading a helper's output", errno);
      if (got == 0) {
        (is_out ? out_fd : err_fd).reset();
        continue;
      }
      // stderr is kept short: only its first line is shown.
      if (is_out)
        out->append(buf, static_cast<size_t>(got));
      else if (err->size() < 4096)
        err->append(buf, static_cast<size_t>(got));
    }
  }
  return Status::Ok();
}

std::string FirstLine(const std::string& s) {
  size_t start = s.find_first_not_of("\n");
  if (start == std::string::npos) return "";
  return s.substr(start, s.find('\n', start) - start);
}

}  // namespace

Status RunTool(const ToolRun& run, std::string* out) {
  if (run.argv.empty()) return Status::InvalidArgument("RunTool: empty argv");
  const std::string& name = run.label.empty() ? run.argv[0] : run.label;
  UniqueFd out_r, out_w, err_r, err_w, exec_r, exec_w;
  if (run.stdout_fd < 0) GUARD_RETURN_IF_ERROR(MakePipe(&out_r, &out_w));
  GUARD_RETURN_IF_ERROR(MakePipe(&err_r, &err_w));
  // Closed by a successful exec (close-on-exec); carries errno otherwise.
  GUARD_RETURN_IF_ERROR(MakePipe(&exec_r, &exec_w));

  // Everything the child needs is built before fork: after it only
  // async-signal-safe calls are made.
  std::vector<char*> argv, envp;
  for (const std::string& a : run.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : run.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int child_stdout = run.stdout_fd >= 0 ? run.stdout_fd : out_w.get();

  pid_t pid = ::fork();
  if (pid < 0) return Status::FromErrno("fork", errno);
  if (pid == 0) {
    // dup2 onto the same number does nothing and leaves close-on-exec set,
    // so stdout passed through as fd 1 has the flag cleared by hand.
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int fail = 0;
    if (devnull < 0 || ::dup2(devnull, 0) < 0) fail = errno;
    if (!fail && child_stdout == 1) {
      int flags = ::fcntl(1, F_GETFD);
      if (flags < 0 || ::fcntl(1, F_SETFD, flags & ~FD_CLOEXEC) < 0) fail = errno;
    } else if (!fail && ::dup2(child_stdout, 1) < 0) {
      fail = errno;
    }
    if (!fail && ::dup2(err_w.get(), 2) < 0) fail = errno;
    if (!fail && !run.cwd.empty() && ::chdir(run.cwd.c_str()) != 0) fail = errno;
    if (!fail) {
      ::signal(SIGPIPE, SIG_DFL);
      os::ExecVpe(argv[0], argv.data(), envp.data());
      fail = errno;
    }
    ssize_t ignored = ::write(exec_w.get(), &fail, sizeof fail);
    (void)ignored;
    ::_exit(127);
  }
  out_w.reset();
  err_w.reset();
  exec_w.reset();

  std::string collected, err;
  Status drained = Drain(std::move(out_r), std::move(err_r), &collected, &err);
  int exec_errno = 0;
  ssize_t got = GUARD_EINTR_RETRY(::read(exec_r.get(), &exec_errno, sizeof exec_errno));
  int status = 0;
  if (GUARD_EINTR_RETRY(::waitpid(pid, &status, 0)) < 0) return Status::FromErrno("waitpid " + name, errno);
  if (got == static_cast<ssize_t>(sizeof exec_errno))
    return Status::FromErrno("cannot run " + name, exec_errno);
  GUARD_RETURN_IF_ERROR(drained);
  if (out != nullptr) *out = std::move(collected);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  // Output passed through to a reader that stopped reading (`guard diff |
  // head`): what was wanted was written.
  if (run.stdout_fd >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE) return Status::Ok();
  std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : "killed by signal " + std::to_string(WTERMSIG(status));
  std::string line = FirstLine(err);
  return Status::IOError(name + " " + how + (line.empty() ? "" : ": " + line));
}

}  // namespace guard
