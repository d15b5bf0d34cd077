#include "supervisor/trace/core_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "common/file_io.h"

namespace guard {
namespace {

// A page: a smaller limit makes the kernel skip a dump to a file (an ELF
// dump's min_coredump).
constexpr unsigned long long kMinCoreLimit = 4096;

bool DumpsCore(int sig) {
  switch (sig) {
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS:
    case SIGFPE: case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
      return true;
    default:
      return false;
  }
}

std::string Proc(pid_t tid, const char* what) { return "/proc/" + std::to_string(tid) + "/" + what; }

// The value of line `key` ("SigCgt:") of a /proc status text, or "".
std::string Field(const std::string& status, const std::string& key) {
  size_t at = status.find("\n" + key);
  if (at == std::string::npos) return std::string();
  at += key.size() + 1;
  size_t end = status.find('\n', at);
  std::string v = status.substr(at, end == std::string::npos ? std::string::npos : end - at);
  size_t first = v.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : v.substr(first);
}

// The first and the last whitespace-separated numbers of a status value
// ("Uid:" real id first; "NSpid:" the innermost namespace's id last).
long FirstNumber(const std::string& v) { return std::strtol(v.c_str(), nullptr, 10); }
long LastNumber(const std::string& v) {
  size_t at = v.find_last_of(" \t");
  return std::strtol(v.c_str() + (at == std::string::npos ? 0 : at + 1), nullptr, 10);
}

bool SignalIn(const std::string& hex_mask, int sig) {
  unsigned long long mask = std::strtoull(hex_mask.c_str(), nullptr, 16);
  return sig >= 1 && sig <= 64 && ((mask >> (sig - 1)) & 1) != 0;
}

// The kernel's escaping of a name put into the pattern: '/' becomes '!'.
std::string Escaped(std::string s) {
  for (char& c : s) {
    if (c == '/') c = '!';
  }
  return s;
}

bool SameUtsNamespace(pid_t tid) {
  struct stat mine, theirs;
  return stat("/proc/self/ns/uts", &mine) == 0 && stat(Proc(tid, "ns/uts").c_str(), &theirs) == 0 &&
         mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

}  // namespace

bool ExpandCorePattern(const std::string& pattern, bool uses_pid, const DyingProcess& p,
                       std::string* out, Status* why) {
  std::ostringstream name;
  bool pid_in_pattern = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      name << pattern[i];
      continue;
    }
    if (++i == pattern.size()) break;  // a lone trailing '%' is dropped
    switch (pattern[i]) {
      case '%': name << '%'; break;
      case 'p': pid_in_pattern = true; name << p.pid; break;
      case 'P': name << p.global_pid; break;
      case 'i': name << p.tid; break;
      case 'I': name << p.global_tid; break;
      case 'u': name << p.uid; break;
      case 'g': name << p.gid; break;
      case 's': name << p.sig; break;
      case 'c': name << p.core_limit; break;
      case 'e': name << Escaped(p.comm); break;
      case 'E': name << Escaped(p.exe); break;
      case 'f': name << Escaped(p.exe.substr(p.exe.rfind('/') + 1)); break;
      case 'h':
        if (p.hostname.empty()) {
          *why = Status::Unsupported("core_pattern %h: the dying process has a hostname of its own");
          return false;
        }
        name << Escaped(p.hostname);
        break;
      case 't':
        *why = Status::Unsupported("core_pattern %t: the time of the dump cannot be known ahead");
        return false;
      case 'd':
        *why = Status::Unsupported("core_pattern %d: the process's dumpable mode cannot be read");
        return false;
      default:
        break;  // the kernel drops an unknown specifier, '%' and letter both
    }
  }
  if (uses_pid && !pid_in_pattern) name << '.' << p.pid;
  *out = name.str();
  return true;
}

bool PredictCoreDump(pid_t tid, int sig, MutationRequest* req, Status* why) {
  *why = Status::Ok();
  if (!DumpsCore(sig)) return false;
  std::string status;
  if (!ReadFileToString(Proc(tid, "status"), &status).ok()) return false;  // gone already
  // A caught or ignored signal runs a handler or nothing: no dump. (A fault
  // signal that was blocked or ignored has been reset to its default by the
  // kernel before this stop.)
  if (SignalIn(Field(status, "SigCgt:"), sig) || SignalIn(Field(status, "SigIgn:"), sig)) return false;
  struct rlimit core;
  if (prlimit(tid, RLIMIT_CORE, nullptr, &core) != 0 || core.rlim_cur < kMinCoreLimit) return false;
  std::string pattern;
  if (!ReadFileToString("/proc/sys/kernel/core_pattern", &pattern).ok()) return false;
  while (!pattern.empty() && pattern.back() == '\n') pattern.pop_back();
  if (!pattern.empty() && pattern[0] == '|') return false;  // a pipe: no file
  if (pattern.empty()) pattern = "core";
  std::string uses_pid;
  (void)ReadFileToString("/proc/sys/kernel/core_uses_pid", &uses_pid);

  DyingProcess p;
  p.global_pid = FirstNumber(Field(status, "Tgid:"));
  p.global_tid = tid;
  std::string nstgid = Field(status, "NStgid:"), nspid = Field(status, "NSpid:");
  p.pid = nstgid.empty() ? p.global_pid : LastNumber(nstgid);
  p.tid = nspid.empty() ? tid : LastNumber(nspid);
  p.uid = FirstNumber(Field(status, "Uid:"));
  p.gid = FirstNumber(Field(status, "Gid:"));
  p.sig = sig;
  p.core_limit = core.rlim_cur;
  if (ReadFileToString(Proc(tid, "comm"), &p.comm).ok() && !p.comm.empty() && p.comm.back() == '\n') {
    p.comm.pop_back();
  }
  (void)ReadLinkAt(AT_FDCWD, Proc(tid, "exe"), "exe", &p.exe);
  char host[256] = {};
  if (SameUtsNamespace(tid) && gethostname(host, sizeof host - 1) == 0) p.hostname = host;

  *req = MutationRequest();
  req->action = MutationRequest::Action::kOpen;
  req->syscall = "core dump";
  req->dirfd = AT_FDCWD;
  req->flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW;
  req->mode = 0600;
  if (!ExpandCorePattern(pattern, uses_pid.size() > 0 && uses_pid[0] != '0', p, &req->path, why)) {
    req->path = pattern;
  }
  return true;
}

}  // namespace guard
