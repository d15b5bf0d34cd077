#include "supervisor/trace/signal_call.h"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>

#include "common/file_io.h"

namespace guard {
namespace {

// pidfd_send_signal's flag (Linux 6.9): the pidfd's process group.
constexpr uint64_t kPidfdSignalProcessGroup = 1u << 2;
// How many times the group is read before the tracer stops looking for
// members that joined it meanwhile.
constexpr int kGroupPasses = 4;

// The kernel takes pids and signals as ints: the low 32 bits.
int Int(uint64_t arg) { return static_cast<int>(static_cast<uint32_t>(arg)); }

// The value after `key` in /proc/.../status-like text, or -1.
long Field(const std::string& text, const char* key) {
  size_t at = text.find(key);
  if (at == std::string::npos || (at != 0 && text[at - 1] != '\n')) return -1;
  const char* p = text.c_str() + at + std::strlen(key);
  char* end = nullptr;
  long v = std::strtol(p, &end, 10);
  return end == p ? -1 : v;
}

bool GuardsThread(pid_t tid, ProcessFacts& facts) {
  if (tid <= 0) return false;
  pid_t tgid = facts.ThreadGroupOf(tid);
  return tgid > 0 && facts.IsGuards(tgid);
}

SignalDecision ForGroup(pid_t group, int sig, ProcessFacts& facts) {
  SignalDecision d;
  if (group <= 0) return d;
  for (pid_t member : facts.GroupMembers(group)) {
    if (facts.IsGuards(member)) {
      d.verdict = SignalVerdict::kGroupButGuard;
      d.group = group;
      d.sig = sig;
      return d;
    }
  }
  return d;
}

SignalDecision Refuse() {
  SignalDecision d;
  d.verdict = SignalVerdict::kRefuse;
  return d;
}

}  // namespace

bool IsGuardReachingCall(long nr) {
  switch (nr) {
    case SYS_kill:
    case SYS_tkill:
    case SYS_tgkill:
    case SYS_rt_sigqueueinfo:
    case SYS_rt_tgsigqueueinfo:
    case SYS_pidfd_send_signal:
    case SYS_prlimit64:
      return true;
    default:
      return false;
  }
}

SignalDecision DecideSignalCall(long nr, const uint64_t args[6], pid_t caller_tid, ProcessFacts& facts) {
  switch (nr) {
    case SYS_kill: {
      const int pid = Int(args[0]);
      if (pid == -1) return Refuse();
      if (pid == 0) return ForGroup(facts.GroupOf(facts.ThreadGroupOf(caller_tid)), Int(args[1]), facts);
      if (pid < 0) return ForGroup(-pid, Int(args[1]), facts);
      // kill of a thread's id signals its process.
      return GuardsThread(pid, facts) ? Refuse() : SignalDecision{};
    }
    case SYS_tkill:
      return GuardsThread(Int(args[0]), facts) ? Refuse() : SignalDecision{};
    case SYS_tgkill:
    case SYS_rt_tgsigqueueinfo:
      return GuardsThread(Int(args[0]), facts) || GuardsThread(Int(args[1]), facts) ? Refuse() : SignalDecision{};
    case SYS_rt_sigqueueinfo:
      return GuardsThread(Int(args[0]), facts) ? Refuse() : SignalDecision{};
    case SYS_pidfd_send_signal: {
      // Another thread may put another pidfd at this number before the
      // call runs (docs/security.md: what stays open).
      const pid_t target = facts.PidfdTarget(caller_tid, Int(args[0]));
      if (target <= 0) return {};
      if ((args[3] & kPidfdSignalProcessGroup) != 0) return ForGroup(facts.GroupOf(target), Int(args[1]), facts);
      return GuardsThread(target, facts) ? Refuse() : SignalDecision{};
    }
    case SYS_prlimit64: {
      const int pid = Int(args[0]);
      if (pid == 0 || args[2] == 0) return {};  // the caller's own, or only read
      return GuardsThread(pid, facts) ? Refuse() : SignalDecision{};
    }
    default:
      return {};
  }
}

int SignalGroupButGuard(pid_t group, int sig, ProcessFacts& facts) {
  std::unordered_set<pid_t> seen;
  bool delivered = false;
  int last_error = EPERM;  // a group of guard's processes alone
  for (int pass = 0; pass < kGroupPasses; ++pass) {
    bool fresh = false;
    for (pid_t member : facts.GroupMembers(group)) {
      if (!seen.insert(member).second || facts.IsGuards(member)) continue;
      fresh = true;
      const int err = facts.Send(member, sig);
      if (err == 0) delivered = true;
      else if (err != ESRCH || !delivered) last_error = err;  // one gone meanwhile is no failure
    }
    if (!fresh) break;
  }
  return delivered ? 0 : last_error;
}

pid_t LiveProcessFacts::ThreadGroupOf(pid_t tid) {
  std::string status;
  if (!ReadFileToString("/proc/" + std::to_string(tid) + "/status", &status).ok()) return -1;
  return static_cast<pid_t>(Field(status, "Tgid:\t"));
}

pid_t LiveProcessFacts::GroupOf(pid_t pid) {
  if (pid <= 0) return -1;
  return getpgid(pid);
}

pid_t LiveProcessFacts::PidfdTarget(pid_t tid, int fd) {
  if (fd < 0) return -1;
  std::string info;
  if (!ReadFileToString("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd), &info).ok()) return -1;
  return static_cast<pid_t>(Field(info, "Pid:\t"));
}

bool LiveProcessFacts::IsGuards(pid_t tgid) {
  if (tgid <= 0) return false;
  if (tgid == getpid()) return true;
  // The front is guard's while it is this process's parent: once it has
  // exited, its pid may be anyone's.
  if (front_ > 0 && tgid == front_ && getppid() == front_) return true;
  if (traced_ && traced_(tgid)) return false;
  std::string status;
  if (!ReadFileToString("/proc/" + std::to_string(tgid) + "/status", &status).ok()) return false;
  return Field(status, "PPid:\t") == getpid();  // a helper of the supervisor's, not traced
}

std::vector<pid_t> LiveProcessFacts::GroupMembers(pid_t pgid) {
  std::vector<pid_t> members;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return members;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0) continue;
    if (getpgid(static_cast<pid_t>(pid)) == pgid) members.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return members;
}

int LiveProcessFacts::Send(pid_t pid, int sig) { return kill(pid, sig) == 0 ? 0 : errno; }

}  // namespace guard
