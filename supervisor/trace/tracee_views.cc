#include "supervisor/trace/tracee_views.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <mutex>

#include "common/file_io.h"
#include "common/syscall_table.h"

namespace guard {
namespace {

Status ReadLink(const std::string& path, std::string* out) { return ReadLinkAt(AT_FDCWD, path, path, out); }

std::string Proc(pid_t tid, const char* what) { return "/proc/" + std::to_string(tid) + "/" + what; }

std::mutex session_ns_mu;
std::string session_ns;  // guarded by session_ns_mu; "" once forgotten

bool IsSessionNamespace(const std::string& ns) {
  std::lock_guard<std::mutex> lock(session_ns_mu);
  return !session_ns.empty() && ns == session_ns;
}

bool SameMountNamespace(pid_t tid) {
  static const std::string self = [] {
    std::string ns;
    return ReadLink("/proc/self/ns/mnt", &ns).ok() ? ns : std::string();
  }();
  std::string ns;
  // Unreadable: take guard's view, as before namespaces were looked at.
  if (self.empty() || !ReadLink(Proc(tid, "ns/mnt"), &ns).ok()) return true;
  return ns == self || IsSessionNamespace(ns);
}

}  // namespace

Status ReadView(pid_t tid, View* view) {
  *view = View();
  GUARD_RETURN_IF_ERROR(ReadLink(Proc(tid, "root"), &view->root_link));
  if (SameMountNamespace(tid)) {
    view->root = view->root_link == "/" ? "" : view->root_link;
    return Status::Ok();
  }
  view->own_namespace = true;
  view->prefix = Proc(tid, "root");
  return Status::Ok();
}

void SetSessionNamespace(const std::string& ns_link) {
  std::lock_guard<std::mutex> lock(session_ns_mu);
  session_ns = ns_link;
}

void ForgetSessionNamespace() {
  std::lock_guard<std::mutex> lock(session_ns_mu);
  session_ns.clear();
}

bool IsMountCall(long nr) {
  return nr == SYS_mount || nr == SYS_umount2 || nr == SYS_move_mount || nr == SYS_open_tree ||
         nr == SYS_fsmount || nr == SYS_mount_setattr;
}

// The filter stops them, and they change no file (common/syscall_table.h).
bool IsViewChange(long nr) {
  const guard_syscall* call = guard_syscall_find(nr);
  return call != nullptr && call->filter == GUARD_SYSCALL_TRAP && call->action == GUARD_ACTION_None;
}

Status TraceeViews::Get(pid_t tid, View* out) {
  if (auto it = kept_.find(tid); it != kept_.end()) {
    *out = it->second;
    return Status::Ok();
  }
  GUARD_RETURN_IF_ERROR(ReadView(tid, out));
  if (changing_.empty()) kept_.emplace(tid, *out);
  return Status::Ok();
}

void TraceeViews::ChangeBegins(pid_t tid) {
  kept_.clear();
  changing_.insert(tid);
}

void TraceeViews::Forget(pid_t tid) {
  kept_.erase(tid);
  changing_.erase(tid);
}

}  // namespace guard
