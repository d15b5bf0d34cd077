#include "supervisor/commands/command_group.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/os_calls.h"

extern char** environ;

namespace guard {
namespace {

// The group guard's signals go to while the command runs (-1: none).
std::atomic<pid_t> g_group{-1};

void PassOn(int sig) {
  const int saved = errno;
  const pid_t group = g_group.load(std::memory_order_relaxed);
  if (group > 0) killpg(group, sig);
  errno = saved;
}

constexpr int kPassedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// guard's environment with `overrides` replacing or adding entries.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || o.compare(0, name.size() + 1, name + "=") == 0;
    if (!replaced) out.push_back(entry);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>* strings) {
  std::vector<char*> out;
  for (std::string& s : *strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The child, between fork and exec: async-signal-safe calls only (guard
// has threads).
[[noreturn]] void ChildMain(int go, int result, const char* program, char* const argv[], char* const envp[]) {
  (void)setpgid(0, 0);  // as the parent does: whichever runs first
  char byte = 0;
  ssize_t got;
  do {
    got = read(go, &byte, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1) _exit(127);  // guard went away before Go
  for (int sig : kPassedSignals) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(program, argv, envp);
  const int err = errno;
  (void)!write(result, &err, sizeof err);
  _exit(127);
}

}  // namespace

Status FindOnPath(const std::string& name, const std::string& path, std::string* out) {
  if (name.empty()) return Status::NotFound("an empty command name");
  if (name.find('/') != std::string::npos) {
    *out = name;
    return Status::Ok();
  }
  size_t start = 0;
  for (;;) {
    const size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";  // an empty entry is the current directory, as for execvp
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      *out = candidate;
      return Status::Ok();
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return Status::NotFound(name + ": command not found");
}

Status CommandGroup::Start(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  if (argv.empty()) return Status::InvalidArgument("no command");
  std::string program;
  const char* path = std::getenv("PATH");
  GUARD_RETURN_IF_ERROR(FindOnPath(argv[0], path != nullptr ? path : "/usr/bin:/bin", &program));
  // Everything the child needs is made before the fork.
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnvironment(env);
  std::vector<char*> arg_ptrs = Pointers(&args), env_ptrs = Pointers(&envs);
  int go[2], result[2];
  if (os::PipeCloexec(go) != 0) return Status::FromErrno("pipe", errno);
  UniqueFd go_read(go[0]), go_write(go[1]);
  if (os::PipeCloexec(result) != 0) return Status::FromErrno("pipe", errno);
  UniqueFd result_read(result[0]), result_write(result[1]);
  foreground_ = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  pid_t pid = fork();
  if (pid < 0) return Status::FromErrno("fork", errno);
  if (pid == 0) {
    close(go[1]);
    close(result[0]);
    ChildMain(go[0], result[1], program.c_str(), arg_ptrs.data(), env_ptrs.data());
  }
  pid_ = pid;
  (void)setpgid(pid, pid);
  if (foreground_ && tcsetpgrp(STDIN_FILENO, pid) != 0) foreground_ = false;
  go_ = std::move(go_write);
  result_ = std::move(result_read);
  return Status::Ok();
}

Status CommandGroup::Go() {
  const char byte = 1;
  if (write(go_.get(), &byte, 1) != 1) return Status::FromErrno("starting the command", errno);
  go_.reset();
  int err = 0;
  ssize_t got;
  do {
    got = read(result_.get(), &err, sizeof err);
  } while (got < 0 && errno == EINTR);
  result_.reset();
  if (got == 0) return Status::Ok();  // the exec closed the pipe
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  TakeTerminalBack();
  return Status::FromErrno("exec", got == static_cast<ssize_t>(sizeof err) ? err : EIO);
}

Status CommandGroup::Wait(int* status) {
  struct sigaction pass {}, old[4];
  pass.sa_handler = PassOn;
  pass.sa_flags = SA_RESTART;
  sigemptyset(&pass.sa_mask);
  g_group.store(pid_, std::memory_order_relaxed);
  for (int i = 0; i < 4; ++i) sigaction(kPassedSignals[i], &pass, &old[i]);
  Status out;
  for (;;) {
    int st = 0;
    if (waitpid(pid_, &st, WUNTRACED) < 0) {
      if (errno == EINTR) continue;
      out = Status::FromErrno("waiting for the command", errno);
      break;
    }
    if (WIFSTOPPED(st)) {
      // Ctrl-Z: guard stops as the command did, so that the shell sees
      // its job stopped; when it is continued, so is the command.
      const bool had_terminal = foreground_;
      TakeTerminalBack();
      raise(SIGSTOP);
      if (had_terminal && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp() &&
          tcsetpgrp(STDIN_FILENO, pid_) == 0) {
        foreground_ = true;
      }
      killpg(pid_, SIGCONT);
      continue;
    }
    *status = st;
    break;
  }
  TakeTerminalBack();
  // What the command left running in its group: waited for, as the
  // tracer waits for every process of the session. Nothing tells a parent
  // that is no parent of theirs when they end, so the group is polled.
  while (out.ok() && (killpg(pid_, 0) == 0 || errno == EPERM)) {
    timespec pause{0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  g_group.store(-1, std::memory_order_relaxed);
  for (int i = 0; i < 4; ++i) sigaction(kPassedSignals[i], &old[i], nullptr);
  return out;
}

void CommandGroup::TakeTerminalBack() {
  if (!foreground_) return;
  foreground_ = false;
  // guard's group is in the background now: tcsetpgrp would stop it.
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  (void)tcsetpgrp(STDIN_FILENO, getpgrp());
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

CommandGroup::~CommandGroup() { TakeTerminalBack(); }

}  // namespace guard
