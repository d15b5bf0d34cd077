#include "tests/e2e/support/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "common/file_io.h"
#include "tests/e2e/support/guard_runner.h"

namespace guard::e2e {
namespace {

std::vector<pid_t> AllPids() {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && v > 0) out.push_back(static_cast<pid_t>(v));
  }
  closedir(d);
  return out;
}

// State letter and parent from /proc/PID/stat; false if the process is gone.
// The command name may hold spaces and parentheses: parse after the last ')'.
bool ReadStat(pid_t pid, char* state, pid_t* ppid) {
  std::string stat;
  if (!ReadFileToString("/proc/" + std::to_string(pid) + "/stat", &stat).ok()) return false;
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 4 > stat.size()) return false;
  *state = stat[close + 2];
  *ppid = static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
  return true;
}

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

std::vector<pid_t> Descendants(pid_t ancestor) {
  std::multimap<pid_t, pid_t> children;
  for (pid_t p : AllPids()) {
    char state;
    pid_t ppid;
    if (ReadStat(p, &state, &ppid)) children.emplace(ppid, p);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> todo{ancestor};
  std::set<pid_t> seen{ancestor};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      if (seen.insert(it->second).second) {
        out.push_back(it->second);
        todo.push_back(it->second);
      }
    }
  }
  return out;
}

bool ProcessGone(pid_t pid) {
  char state;
  pid_t ppid;
  if (!ReadStat(pid, &state, &ppid)) return true;
  return state == 'Z' || state == 'X';
}

std::vector<pid_t> ProcessesWithEnv(const std::string& name, const std::string& value) {
  std::string wanted = name + "=" + value;
  std::vector<pid_t> out;
  for (pid_t p : AllPids()) {
    std::string env;
    if (!ReadFileToString("/proc/" + std::to_string(p) + "/environ", &env).ok()) continue;
    size_t start = 0;
    while (start < env.size()) {
      size_t end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      if (env.compare(start, end - start, wanted) == 0) {
        if (!ProcessGone(p)) out.push_back(p);
        break;
      }
      start = end + 1;
    }
  }
  return out;
}

// Whether `pid` is the supervisor guard `guard_pid` forked for itself
// (supervisor/front_process.h): a child of it still running guard's binary.
// guard's own process (the supervisor), told by its program: not by its
// parent, which changes as the front exits when the command's status is
// handed back (the deferred seal), possibly between two reads here.
bool IsGuardSupervisor(pid_t pid, pid_t guard_pid) {
  (void)guard_pid;
  std::error_code ec1, ec2;
  auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec1);
  static const std::filesystem::path guard_exe = std::filesystem::canonical(GuardBinary(), ec2);
  return !ec1 && exe == guard_exe;
}

int SignalSessionProcesses(pid_t guard_pid, const std::string& session_id, int sig, int rounds) {
  int signalled = 0;
  std::set<pid_t> sent;
  for (int round = 0; round < rounds; ++round) {
    bool any = false;
    std::vector<pid_t> targets = Descendants(guard_pid);
    for (pid_t p : ProcessesWithEnv("GUARD_SESSION", session_id)) targets.push_back(p);
    for (pid_t p : targets) {
      if (p == guard_pid || IsGuardSupervisor(p, guard_pid) || ProcessGone(p)) continue;
      any = true;
      if (kill(p, sig) == 0 && sent.insert(p).second) ++signalled;
    }
    if (!any) break;
    SleepMs(2);
  }
  return signalled;
}

std::vector<pid_t> WaitGone(const std::vector<pid_t>& pids, int timeout_ms) {
  std::vector<pid_t> alive = pids;
  for (int waited = 0;; waited += 5) {
    std::vector<pid_t> still;
    for (pid_t p : alive) {
      if (!ProcessGone(p)) still.push_back(p);
    }
    alive.swap(still);
    if (alive.empty() || waited >= timeout_ms) return alive;
    SleepMs(5);
  }
}

std::string DescribeProcess(pid_t pid) {
  std::string comm;
  if (ReadFileToString("/proc/" + std::to_string(pid) + "/comm", &comm).ok() && !comm.empty() &&
      comm.back() == '\n') {
    comm.pop_back();
  }
  return std::to_string(pid) + " (" + (comm.empty() ? "?" : comm) + ")";
}

}  // namespace guard::e2e
