#include "tests/e2e/support/guard_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace guard::e2e {
namespace {

[[noreturn]] void Fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::vector<std::string> BuildEnv(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  if (!spec.clear_env) {
    for (char** e = environ; *e != nullptr; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  for (const auto& [name, value] : spec.env) {
    if (value) env[name] = *value;
    else env.erase(name);
  }
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

void ClosePair(int fds[2]) {
  close(fds[0]);
  close(fds[1]);
}

}  // namespace

ChildProcess::ChildProcess(const ProcessSpec& spec) : timeout_seconds_(spec.timeout_seconds) {
  if (spec.argv.empty()) throw std::runtime_error("ChildProcess: empty argv");
  // A run that stops reading its stdin must not kill the test with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);

  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> env_strings = BuildEnv(spec);
  std::vector<char*> envp, argv;
  for (std::string& kv : env_strings) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string cwd = spec.cwd;
  bool new_group = spec.new_process_group;

  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) Fail("pipe2", errno);
  if (pipe2(out, O_CLOEXEC) != 0) {
    int e = errno;
    ClosePair(in);
    Fail("pipe2", e);
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    ClosePair(in);
    ClosePair(out);
    Fail("pipe2", e);
  }
  bool feed = spec.stdin_data.has_value();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    ClosePair(in);
    ClosePair(out);
    ClosePair(err);
    Fail("fork", e);
  }
  if (pid == 0) {
    // The child: default signal dispositions and mask, as a shell would give.
    if (new_group) setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int stdin_fd = in[0];
    // Close-on-exec, like the pipes: dup2 gives fd 0 its own flags, and the
    // program must be given no fd but 0, 1 and 2.
    if (!feed) stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (stdin_fd < 0 || dup2(stdin_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) _exit(126);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      static const char kMsg[] = "e2e runner: cannot chdir\n";
      (void)!write(2, kMsg, sizeof kMsg - 1);
      _exit(126);
    }
    execvpe(argv[0], argv.data(), envp.data());
    static const char kMsg[] = "e2e runner: cannot exec\n";
    (void)!write(2, kMsg, sizeof kMsg - 1);
    _exit(errno == ENOENT ? 127 : 126);
  }
  pid_ = pid;
  close(in[0]);
  close(out[1]);
  close(err[1]);
  out_ = out[0];
  err_ = err[0];
  if (feed) {
    in_ = in[1];
    stdin_data_ = *spec.stdin_data;
    fcntl(in_, F_SETFL, fcntl(in_, F_GETFL) | O_NONBLOCK);
  } else {
    close(in[1]);
  }
}

ChildProcess::~ChildProcess() {
  if (!waited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (int fd : {in_, out_, err_}) {
    if (fd >= 0) close(fd);
  }
}

ProcessResult ChildProcess::Wait() {
  if (waited_) throw std::logic_error("ChildProcess::Wait called twice");
  waited_ = true;
  ProcessResult result;
  int64_t deadline = NowMs() + static_cast<int64_t>(timeout_seconds_) * 1000;
  size_t fed = 0;
  if (in_ >= 0 && stdin_data_.empty()) {
    close(in_);
    in_ = -1;
  }
  while (out_ >= 0 || err_ >= 0 || in_ >= 0) {
    pollfd fds[3];
    int n = 0;
    if (in_ >= 0) fds[n++] = {in_, POLLOUT, 0};
    if (out_ >= 0) fds[n++] = {out_, POLLIN, 0};
    if (err_ >= 0) fds[n++] = {err_, POLLIN, 0};
    int64_t left = deadline - NowMs();
    if (left <= 0) {
      // Past the deadline: kill the child, then give the pipes a few seconds
      // to close (a grandchild may still hold them) before giving up on them.
      if (result.timed_out) break;
      result.timed_out = true;
      kill(pid_, SIGKILL);
      deadline = NowMs() + 5000;
      continue;
    }
    int rc = poll(fds, n, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      Fail("poll", errno);
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_) {
        ssize_t w = write(in_, stdin_data_.data() + fed, stdin_data_.size() - fed);
        if (w > 0) fed += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || fed == stdin_data_.size()) {
          close(in_);  // EPIPE: the child stopped reading; that is its business
          in_ = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      std::string& sink = fds[i].fd == out_ ? result.out : result.err;
      if (got > 0) {
        sink.append(buf, static_cast<size_t>(got));
        continue;
      }
      close(fds[i].fd);
      (fds[i].fd == out_ ? out_ : err_) = -1;
    }
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) Fail("waitpid", errno);
  }
  result.wait_status = status;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

ProcessResult RunProcess(const ProcessSpec& spec) { return ChildProcess(spec).Wait(); }

std::string GuardBinary() { return GUARD_BINARY; }
std::string TestProgram(const std::string& name) { return std::string(GUARD_TEST_PROGRAMS_DIR) + "/" + name; }

std::map<std::string, std::optional<std::string>> GuardEnv(const Workspace& ws) {
  // XDG_CONFIG_HOME: the workspace's own config.toml (none unless a test
  // writes one), never the config of the user running the tests.
  return {{"GUARD_HOME", ws.home()},
          {"XDG_CONFIG_HOME", ws.dir() + "/config"},
          {"GUARD_SESSION", std::nullopt},
          {"GUARD_ROOT", std::nullopt}};
}

ProcessSpec GuardSpec(const Workspace& ws, const GuardRun& run) {
  ProcessSpec spec;
  spec.argv = {GuardBinary()};
  if (run.quiet) spec.argv.push_back("--quiet");
  spec.argv.push_back("--root");
  spec.argv.push_back(ws.tree());
  spec.argv.insert(spec.argv.end(), run.guard_options.begin(), run.guard_options.end());
  spec.argv.push_back("--");
  spec.argv.insert(spec.argv.end(), run.command.begin(), run.command.end());
  spec.cwd = run.cwd.empty() ? ws.tree() : run.cwd;
  spec.clear_env = run.clear_env;
  spec.env = GuardEnv(ws);
  for (const auto& [name, value] : run.env) spec.env[name] = value;
  spec.stdin_data = run.stdin_data;
  spec.timeout_seconds = run.timeout_seconds;
  spec.new_process_group = run.new_process_group;
  return spec;
}

bool WaitForDeferredSeal(const std::string& dir, int timeout_seconds) {
  const time_t deadline = time(nullptr) + timeout_seconds;
  for (;;) {
    if (access((dir + "/sealing").c_str(), F_OK) != 0) return true;
    int fd = open((dir + "/recovery.lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    if (!held) return true;  // sealed, or its sealer died: the next command completes it
    if (time(nullptr) > deadline) return false;
    usleep(2000);
  }
}

bool WaitForDeferredSealsIn(const std::string& home, int timeout_seconds) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(home + "/sessions", ec)) {
    if (!e.is_directory()) continue;
    if (!WaitForDeferredSeal(e.path().string(), timeout_seconds)) return false;
  }
  return true;
}

bool WaitForDeferredSeals(const Workspace& ws, int timeout_seconds) {
  return WaitForDeferredSealsIn(ws.home(), timeout_seconds);
}

GuardResult RunGuard(const Workspace& ws, const GuardRun& run) {
  std::vector<std::string> before = ws.SessionIds();
  GuardResult result;
  static_cast<ProcessResult&>(result) = RunProcess(GuardSpec(ws, run));
  // The GUARD_HOME the run used: the workspace's, unless the test set another.
  std::string home = ws.home();
  if (auto it = run.env.find("GUARD_HOME"); it != run.env.end() && it->second) home = *it->second;
  if (!WaitForDeferredSealsIn(home, run.timeout_seconds)) {
    result.err += "\n(test: a deferred seal still held its lock after " + std::to_string(run.timeout_seconds) + " s)";
  }
  for (const std::string& id : ws.SessionIds()) {
    if (!std::binary_search(before.begin(), before.end(), id)) result.new_sessions.push_back(id);
  }
  return result;
}

GuardResult RunGuardBash(const Workspace& ws, const std::string& script) {
  GuardRun run;
  run.command = {"bash", "-c", script};
  return RunGuard(ws, run);
}

}  // namespace guard::e2e
