// guard doctor's probes on Linux (doctor_probes.h).
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/commands/doctor_probes.h"
#include "supervisor/trace/shim_launch.h"

namespace guard {
namespace {

std::string ErrName(int err) {
  const char* name = strerrorname_np(err);
  return std::string(name != nullptr ? name : "error") + " (" + std::strerror(err) + ")";
}

// Runs `probe` in a forked child; its exit code: 0 for yes, else an errno.
template <typename Probe>
int InChild(Probe probe) {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(probe());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}


Finding ProbeSeccomp() {
  Finding f{"seccomp", false, "", {}};
  int err = InChild([] {
    sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{1, &allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
    return 0;
  });
  f.ok = err == 0;
  f.detail = f.ok ? "a filter installs (with no new privileges)" : "a filter is refused: " + ErrName(err);
  return f;
}

Finding ProbeUserNamespaces() {
  Finding f{"user_namespaces", false, "", {}};
  int err = InChild([] { return unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : errno; });
  f.ok = err == 0;
  f.detail = f.ok ? "a user and mount namespace can be made (the state directory is hidden from the command)"
                  : "refused: " + ErrName(err) + " (the state directory cannot be hidden from the command)";
  std::string max;
  if (ReadFileToString("/proc/sys/user/max_user_namespaces", &max).ok() && !max.empty()) {
    f.values["max_user_namespaces"] = std::strtoll(max.c_str(), nullptr, 10);
  }
  return f;
}

Finding ProbeInotify() {
  Finding f{"inotify", false, "", {}};
  for (const char* name : {"max_user_watches", "max_queued_events", "max_user_instances"}) {
    std::string text;
    if (ReadFileToString(std::string("/proc/sys/fs/inotify/") + name, &text).ok() && !text.empty()) {
      f.values[name] = std::strtoll(text.c_str(), nullptr, 10);
    }
  }
  UniqueFd fd(inotify_init1(IN_CLOEXEC));
  f.ok = fd.valid();
  if (!f.ok) {
    f.detail = "inotify_init1: " + ErrName(errno);
    return f;
  }
  f.detail = "max_user_watches " + std::to_string(f.values["max_user_watches"]) + " (one per directory), " +
             "max_queued_events " + std::to_string(f.values["max_queued_events"]);
  return f;
}

std::string FsName(long type) {
  switch (type) {
    case EXT4_SUPER_MAGIC: return "ext4";  // ext2 and ext3 share it
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case XFS_SUPER_MAGIC: return "xfs";
    case TMPFS_MAGIC: return "tmpfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case NFS_SUPER_MAGIC: return "nfs";
    case 0x65735546: return "fuse";
    case 0x2fc12fc1: return "zfs";
    case 0xf2f52010: return "f2fs";
    case 0x5346544e: return "ntfs";
    case 0x4d44: return "vfat";
    case 0xff534d42: return "cifs";
    case 0x01021997: return "9p";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(type));
      return std::string("filesystem ") + hex;
    }
  }
}

// A clone between two unnamed files (O_TMPFILE) at the root: nothing is
// ever visible in the tree.
Finding ProbeReflink(const std::string& root) {
  Finding f{"reflink", false, "", {}};
  struct statfs fs {};
  std::string where = statfs(root.c_str(), &fs) == 0 ? FsName(fs.f_type) + " at " + root : root;
  UniqueFd a(open(root.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  UniqueFd b(open(root.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!a.valid() || !b.valid()) {
    f.detail = where + ": cannot tell (no unnamed file there: " + ErrName(errno) + ")";
    return f;
  }
  const char data[] = "guard doctor";
  if (write(a.get(), data, sizeof data) != static_cast<ssize_t>(sizeof data)) {
    f.detail = where + ": cannot tell (" + ErrName(errno) + ")";
    return f;
  }
  f.ok = ioctl(b.get(), FICLONE, a.get()) == 0;
  f.detail = f.ok ? where + ": files clone (FICLONE): copies cost no space or time"
                  : where + ": no clones (" + ErrName(errno) + "): pre-images are copied or linked";
  return f;
}

Finding ProbeShim() {
  Finding f{"shim", false, "", {}};
  std::string path;
  Status s = FindShim(&path);
  f.ok = s.ok();
  f.detail = f.ok ? path : s.ToString();
  return f;
}

}  // namespace

Finding ProbePtrace() {
  Finding f{"ptrace", false, "", {}};
  pid_t child = fork();
  if (child < 0) return f.detail = "fork: " + ErrName(errno), f;
  if (child == 0) {
    pause();
    _exit(0);
  }
  long rc = ptrace(PTRACE_SEIZE, child, 0, PTRACE_O_EXITKILL);
  int err = errno;
  kill(child, SIGKILL);
  int status;
  while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {
  }
  f.ok = rc == 0;
  f.detail = f.ok ? "a child can be traced (PTRACE_SEIZE)" : "PTRACE_SEIZE of a child: " + ErrName(err);
  std::string scope;
  if (ReadFileToString("/proc/sys/kernel/yama/ptrace_scope", &scope).ok() && !scope.empty()) {
    f.values["yama_ptrace_scope"] = std::strtol(scope.c_str(), nullptr, 10);
  }
  return f;
}

std::vector<Finding> ProbeMachine(const std::string& root) {
  return {ProbePtrace(), ProbeSeccomp(), ProbeUserNamespaces(), ProbeInotify(), ProbeReflink(root), ProbeShim()};
}

std::string DescribeMachine(const std::string& root) {
  utsname u{};
  uname(&u);
  struct statfs fs {};
  std::string out = std::string(u.sysname) + " " + u.release + " " + u.machine;
  if (statfs(root.c_str(), &fs) == 0) out += ", " + FsName(fs.f_type) + " at " + root;
  return out;
}

bool PlatformHasMode(const std::string&) { return true; }

const char* WatchSourceKey() { return "inotify"; }

std::vector<std::string> WatchHereNotes(const std::map<std::string, Finding>& f) {
  std::vector<std::string> out;
  auto inotify = f.find("inotify");
  if (inotify != f.end()) {
    auto limit = inotify->second.values.find("max_user_watches");
    if (limit != inotify->second.values.end()) {
      out.push_back("a tree of more than " + std::to_string(limit->second) +
                    " directories cannot be watched whole here (max_user_watches)");
    }
  }
  auto reflink = f.find("reflink");
  if (reflink == f.end() || !reflink->second.ok) out.push_back("no clones at this filesystem: the baseline is copied");
  return out;
}

}  // namespace guard
