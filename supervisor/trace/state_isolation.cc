#include "supervisor/trace/state_isolation.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_io.h"

namespace guard {
namespace {

// What the child tells the supervisor.
struct Message {
  int32_t kind;   // kMapMe or kRefused
  int32_t value;  // the child's pid, or the errno of the refusal
};
constexpr int32_t kMapMe = 1;
constexpr int32_t kRefused = 2;

// All of the user's ids for root (who may map them), else the user's own.
constexpr const char kAllIds[] = "0 0 4294967295";

// --- async-signal-safe helpers for the child -----------------------------

size_t PutDecimal(char* out, long v) {
  char digits[24];
  size_t n = 0;
  do digits[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) != 0);
  for (size_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

// "/proc/PID/WHAT" into `out` (64 bytes are enough).
void ProcPath(char* out, long pid, const char* what) {
  size_t at = 0;
  memcpy(out, "/proc/", 6);
  at = 6;
  at += PutDecimal(out + at, pid);
  out[at++] = '/';
  size_t n = strlen(what);
  memcpy(out + at, what, n + 1);
}

// 0 or an errno.
int WriteFileText(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t n = strlen(text);
  ssize_t put = write(fd, text, n);
  int err = put == static_cast<ssize_t>(n) ? 0 : (put < 0 ? errno : EIO);
  close(fd);
  return err;
}

void Say(const char* what, int err) {
  static const char kHead[] = "guard: cannot hide the state directory from the command (";
  static const char kTail[] = "); not running it\n";
  (void)!write(STDERR_FILENO, kHead, sizeof kHead - 1);
  (void)!write(STDERR_FILENO, what, strlen(what));
  (void)!write(STDERR_FILENO, ": ", 2);
  const char* e = strerrorname_np(err);
  if (e != nullptr) (void)!write(STDERR_FILENO, e, strlen(e));
  (void)!write(STDERR_FILENO, kTail, sizeof kTail - 1);
}

// Writes the maps of process `pid` (setgroups first where the writer is no
// root of the parent namespace). 0 or an errno; *what names the step.
int WriteMaps(long pid, const char* uid_map, const char* gid_map, bool deny_setgroups, const char** what) {
  char path[64];
  int err = 0;
  if (deny_setgroups) {
    ProcPath(path, pid, "setgroups");
    *what = "setgroups";
    if ((err = WriteFileText(path, "deny")) != 0) return err;
  }
  ProcPath(path, pid, "uid_map");
  *what = "uid_map";
  if ((err = WriteFileText(path, uid_map)) != 0) return err;
  ProcPath(path, pid, "gid_map");
  *what = "gid_map";
  return WriteFileText(path, gid_map);
}

}  // namespace

StateIsolation StateIsolation::For(const std::string& state_dir, bool required, const std::string& also,
                                   const std::string& ring) {
  StateIsolation iso;
  iso.also_ = also;
  if (!ring.empty()) iso.ring_path_ = "/dev/shm/" + ring;
  iso.wanted_ = true;
  iso.required_ = required;
  iso.state_dir_ = state_dir;
  iso.root_ = geteuid() == 0;
  if (iso.root_) {
    iso.uid_map_ = kAllIds;
    iso.gid_map_ = kAllIds;
  } else {
    iso.uid_map_ = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1";
    iso.gid_map_ = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1";
  }
  return iso;
}

Status StateIsolation::OpenChannel() {
  if (!wanted_) return Status::Ok();
  int a[2], b[2];
  if (pipe2(a, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  from_child_.reset(a[0]);
  child_out_.reset(a[1]);
  if (pipe2(b, O_CLOEXEC) != 0) return Status::FromErrno("pipe2", errno);
  child_in_.reset(b[0]);
  to_child_.reset(b[1]);
  return Status::Ok();
}

void StateIsolation::CloseChildEnds() {
  child_out_.reset();
  child_in_.reset();
}

int StateIsolation::EnterInChild() const {
  if (!wanted_) return 0;
  Message m{kMapMe, static_cast<int32_t>(getpid())};
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    // Refused (no user namespaces here): nothing changed.
    m = Message{kRefused, errno};
    if (write(child_out_.get(), &m, sizeof m) != sizeof m) return -1;
    return required_ ? -1 : m.value;
  }
  // Namespace A: its maps can only come from the supervisor, outside.
  char go = 0;
  if (write(child_out_.get(), &m, sizeof m) != sizeof m || read(child_in_.get(), &go, 1) != 1 || go != 'g') {
    return -1;  // the supervisor said why
  }
  // Mounts made here and outside stay apart one way: the host's later
  // mounts still reach the command, the bind never leaves.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return Say("making mounts private", errno), -1;
  for (const std::string* d : {&state_dir_, &also_}) {
    const char* dir = d->c_str();
    if (d->empty() || (d == &also_ && access(dir, F_OK) != 0)) continue;
    if (mount(dir, dir, nullptr, MS_BIND | MS_REC, nullptr) != 0) return Say("bind mount", errno), -1;
    if (mount(nullptr, dir, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) !=
        0) {
      return Say("read-only remount", errno), -1;
    }
  }
  if (!ring_path_.empty() && KeepOnlyTheRing() != 0) return -1;
  // Namespace B, inside A: its maps come from a helper left in A, which
  // has A's capabilities (the supervisor may write only its children's).
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return Say("pipe", errno), -1;
  const long parent = getpid();
  long helper = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
  if (helper < 0) return Say("fork", errno), -1;
  if (helper == 0) {
    char byte = 0;
    close(pipefd[1]);
    if (read(pipefd[0], &byte, 1) != 1) _exit(1);
    const char* what = "";
    int err = WriteMaps(parent, uid_map_.c_str(), gid_map_.c_str(), false, &what);
    if (err != 0) Say(what, err);
    _exit(err == 0 ? 0 : 1);
  }
  close(pipefd[0]);
  int err = unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ? errno : 0;
  char byte = 1;
  if (err == 0) (void)!write(pipefd[1], &byte, 1);
  close(pipefd[1]);
  int status = 0;
  while (waitpid(static_cast<pid_t>(helper), &status, 0) < 0 && errno == EINTR) {
  }
  if (err != 0) return Say("nested namespace", err), -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;  // the helper said why
  if (!inbox_root_.empty() && CoverTheInboxes() != 0) return -1;
  return 0;
}

int StateIsolation::CoverTheInboxes() const {
  // Not close-on-exec: the command inherits it (its number is in the
  // shim's environment already).
  int own = open(own_inbox_.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW);
  if (own < 0) return Say("the session's inbox", errno), -1;
  if (own != inbox_fd_) {
    int err = dup2(own, inbox_fd_) < 0 ? errno : 0;
    close(own);
    if (err != 0) return Say("the inbox's fd", err), -1;
  }
  // Empty and read-only: nothing can be made there either. The owner of
  // namespace B could unmount it; the command is that owner only when it
  // runs as root (docs/security.md).
  if (mount("tmpfs", inbox_root_.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0500,size=4k") !=
      0) {
    return Say("hiding the inboxes", errno), -1;
  }
  return 0;
}

int StateIsolation::KeepOnlyTheRing() const {
  const char* ring = ring_path_.c_str();
  // Held across the mount that hides it: the bind's source.
  int keep = open(ring, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (keep < 0) return Say("the ring segment", errno), -1;
  char source[64];
  ProcPath(source, getpid(), "fd/");
  size_t at = strlen(source);
  source[at + PutDecimal(source + at, keep)] = '\0';
  // nosuid and nodev, as the host's /dev/shm; 1777, so that the command's
  // own shared memory (POSIX semaphores, Python's multiprocessing) works.
  int err = mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0 ? errno : 0;
  const char* what = "a private /dev/shm";
  if (err == 0) {
    what = "the ring's place in it";
    int made = open(ring, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (made < 0) err = errno;
    if (made >= 0) close(made);
  }
  if (err == 0) {
    what = "the ring's bind";
    // Locked in namespace B like the state directory's bind: the command
    // can neither unmount it nor remove its name (EBUSY).
    if (mount(source, ring, nullptr, MS_BIND, nullptr) != 0) err = errno;
  }
  close(keep);
  if (err != 0) return Say(what, err), -1;
  return 0;
}

Status StateIsolation::Serve(pid_t child, bool* isolated, int* refused) {
  *isolated = false;
  *refused = 0;
  if (!wanted_) return Status::Ok();
  Message m{};
  size_t got = 0;
  GUARD_RETURN_IF_ERROR(ReadFull(from_child_.get(), &m, sizeof m, &got, "isolation pipe"));
  if (got != sizeof m) return Status::IOError("the command's process ended before it could be isolated");
  if (m.kind == kRefused) {
    *refused = m.value;
    if (required_) {
      return Status::FromErrno("hide_state = \"required\", but the kernel refuses a user namespace", m.value);
    }
    return Status::Ok();
  }
  if (m.kind != kMapMe || (child > 0 && m.value != child)) return Status::IOError("isolation: unexpected message");
  const char* what = "";
  int err = WriteMaps(m.value, uid_map_.c_str(), gid_map_.c_str(), !root_, &what);
  char go = err == 0 ? 'g' : 'x';
  (void)!write(to_child_.get(), &go, 1);
  if (err != 0) {
    return Status::FromErrno(std::string("cannot hide the state directory from the command (") + what + ")", err);
  }
  *isolated = true;
  return Status::Ok();
}

}  // namespace guard
