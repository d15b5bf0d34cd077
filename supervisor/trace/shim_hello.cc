#include "supervisor/trace/shim_hello.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "common/shim_interface.h"
#include "supervisor/trace/tracee_memory.h"

namespace guard {
namespace {

Status Identify(const std::string& path, FileIdentity* id) {
  struct statx stx;
  if (statx(AT_FDCWD, path.c_str(), 0, STATX_INO, &stx) != 0) return Status::FromErrno(path, errno);
  id->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
  id->ino = stx.stx_ino;
  return Status::Ok();
}

Status ReadText(pid_t tid, const guard_shim_hello_text& t, std::string* out) {
  if (t.len > GUARD_SHIM_HELLO_TEXT_MAX) return Status::InvalidArgument("a text of the hello is too long");
  out->assign(static_cast<size_t>(t.len), '\0');
  if (t.len == 0) return Status::Ok();
  return ReadTraceeBytes(tid, t.addr, out->data(), out->size());
}

}  // namespace

Status IdentifyShimTruth(const std::string& ring_path, ShimTruth* truth) {
  GUARD_RETURN_IF_ERROR(Identify(truth->root, &truth->root_id));
  GUARD_RETURN_IF_ERROR(Identify(truth->pending, &truth->pending_id));
  return Identify(ring_path, &truth->ring_id);
}

std::string CompareShimHello(const ShimHello& h, const ShimTruth& t) {
  if (h.fixed.protocol != GUARD_SHIM_PROTOCOL) return "protocol " + std::to_string(h.fixed.protocol);
  if ((h.fixed.flags & GUARD_SHIM_HELLO_ALONE) != 0) return "GUARD_SHIM_ALONE";
  if (h.root != t.root) return "root " + h.root;
  if (h.state_dir != t.state_dir) return "state directory " + h.state_dir;
  if (h.pending != t.pending) return "inbox " + h.pending;
  if (h.inbox_root != t.inbox_root) return "inboxes " + h.inbox_root;
  if (h.config_dir != t.config_dir) return "configuration directory " + h.config_dir;
  if (h.session != t.session) return "session " + h.session;
  if (FileIdentity{h.fixed.root_dev, h.fixed.root_ino} != t.root_id) return "the root's identity";
  if (FileIdentity{h.fixed.pending_dev, h.fixed.pending_ino} != t.pending_id) return "the inbox's identity";
  if (FileIdentity{h.fixed.ring_dev, h.fixed.ring_ino} != t.ring_id) return "the ring's identity";
  return "";
}

bool IsShimHello(long nr, const uint64_t args[6]) {
  return nr == SYS_mkdirat && static_cast<int>(args[0]) == GUARD_SHIM_HELLO_DIRFD && args[1] == 0 &&
         args[5] == GUARD_SHIM_HELLO_MAGIC;
}

void AnswerShimHello(pid_t tid, const uint64_t args[6], const ShimTruth* truth, SyscallRegs* regs,
                     std::string* why) {
  ShimHello h;
  if (truth == nullptr) {
    *why = "this session has no shim";
  } else if (args[4] != sizeof h.fixed) {
    *why = "a hello of " + std::to_string(args[4]) + " bytes";
  } else if (Status s = ReadTraceeBytes(tid, args[3], &h.fixed, sizeof h.fixed); !s.ok()) {
    *why = s.ToString();
  } else {
    Status read = ReadText(tid, h.fixed.root, &h.root);
    if (read.ok()) read = ReadText(tid, h.fixed.state, &h.state_dir);
    if (read.ok()) read = ReadText(tid, h.fixed.pending, &h.pending);
    if (read.ok()) read = ReadText(tid, h.fixed.inbox, &h.inbox_root);
    if (read.ok()) read = ReadText(tid, h.fixed.config, &h.config_dir);
    if (read.ok()) read = ReadText(tid, h.fixed.session, &h.session);
    *why = read.ok() ? CompareShimHello(h, *truth) : read.ToString();
  }
  regs->SkipWithResult(why->empty() ? GUARD_SHIM_HELLO_AGREED : GUARD_SHIM_HELLO_REFUSED);
}

}  // namespace guard
