// Running programs, and guard itself, from end-to-end tests: arguments,
// working directory and environment under control, stdin fed from a string,
// stdout and stderr captured, a deadline that kills a hung run.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

struct ProcessSpec {
  // argv[0] is a path, or a name searched in this process's PATH.
  std::vector<std::string> argv;
  std::string cwd;  // empty: this process's
  // Start from an empty environment (as `env -i` does) instead of this
  // process's; `env` is applied on top either way.
  bool clear_env = false;
  // NAME -> value to set, or nullopt to remove.
  std::map<std::string, std::optional<std::string>> env;
  // Fed to stdin, which is then closed; nullopt: stdin is /dev/null.
  std::optional<std::string> stdin_data;
  int timeout_seconds = 60;  // then SIGKILL, and timed_out is set
  // Start the child in a process group of its own (as a shell with job
  // control does), so that a kill(0, ...) inside it cannot reach the test.
  bool new_process_group = false;
};

struct ProcessResult {
  int wait_status = 0;
  // The exit code, or 128+N for death by signal N (as a shell reports it).
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};

// A started child. Wait() must be called once; the destructor kills and
// reaps a child that was never waited for.
class ChildProcess {
 public:
  explicit ChildProcess(const ProcessSpec& spec);  // throws std::runtime_error
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Feeds stdin, collects output until both pipes close, then reaps.
  ProcessResult Wait();

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string stdin_data_;
  int timeout_seconds_;
  bool waited_ = false;
};

ProcessResult RunProcess(const ProcessSpec& spec);

// One run of `guard [--quiet] --root TREE [OPTIONS] -- COMMAND...` in a workspace.
struct GuardRun {
  std::vector<std::string> command;
  bool quiet = true;
  std::vector<std::string> guard_options;  // placed before `--`
  std::string cwd;                         // empty: the tree
  bool clear_env = false;                  // see ProcessSpec; GUARD_HOME is set regardless
  std::map<std::string, std::optional<std::string>> env;
  std::optional<std::string> stdin_data;
  int timeout_seconds = 60;
  bool new_process_group = false;  // see ProcessSpec
};

struct GuardResult : ProcessResult {
  std::vector<std::string> new_sessions;  // session ids that appeared during the run
};

// The environment guard runs with in `ws`: GUARD_HOME is the workspace's,
// XDG_CONFIG_HOME is <workspace>/config (so config.toml is
// <workspace>/config/guard/config.toml), and GUARD_SESSION / GUARD_ROOT are removed, so that a test suite itself
// run under guard still starts a real (not a pass-through) session.
std::map<std::string, std::optional<std::string>> GuardEnv(const Workspace& ws);
ProcessSpec GuardSpec(const Workspace& ws, const GuardRun& run);
// Runs guard and, once it has exited, waits for the deferred seals it left
// (supervisor/session/deferred_seal.h), so that the test reads each new
// session whole, as any guard command would.
GuardResult RunGuard(const Workspace& ws, const GuardRun& run);
// Waits until no session of `ws` is being sealed: each one whose `sealing`
// mark has its `recovery.lock` held (by the lock, not by time). False if one
// still is after `timeout_seconds`.
bool WaitForDeferredSeals(const Workspace& ws, int timeout_seconds = 60);
// The same for the sessions of another GUARD_HOME.
bool WaitForDeferredSealsIn(const std::string& home, int timeout_seconds);
// The same for one session directory.
bool WaitForDeferredSeal(const std::string& session_dir, int timeout_seconds);
// Shorthand: `bash -c SCRIPT` under guard, quiet, in the tree.
GuardResult RunGuardBash(const Workspace& ws, const std::string& script);

// The test programs built from tests/programs/*.c.
std::string TestProgram(const std::string& name);
std::string GuardBinary();

}  // namespace guard::e2e
