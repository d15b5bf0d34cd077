#include "supervisor/trace/tracee_views.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include "common/file_io.h"

namespace guard {
namespace {

Status ReadLink(const std::string& path, std::string* out) { return ReadLinkAt(AT_FDCWD, path, path, out); }

std::string Proc(pid_t tid, const char* what) { return "/proc/" + std::to_string(tid) + "/" + what; }

bool SameMountNamespace(pid_t tid) {
  static const std::string self = [] {
    std::string ns;
    return ReadLink("/proc/self/ns/mnt", &ns).ok() ? ns : std::string();
  }();
  std::string ns;
  // Unreadable: take guard's view, as before namespaces were looked at.
  if (self.empty() || !ReadLink(Proc(tid, "ns/mnt"), &ns).ok()) return true;
  return ns == self;
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

bool IsViewChange(long nr) {
  return nr == SYS_chroot || nr == SYS_pivot_root || nr == SYS_unshare || nr == SYS_setns;
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
