#include "supervisor/trace/mark_call.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "supervisor/trace/tracee_memory.h"

namespace guard {

bool IsMarkCall(long nr, const uint64_t args[6]) {
  return nr == SYS_mkdirat && static_cast<int>(args[0]) == kMarkDirfd && args[1] == 0 && args[5] == kMarkMagic;
}

void AnswerMarkCall(pid_t tid, const uint64_t args[6], MutationSink* sink, SyscallRegs* regs) {
  const size_t length = static_cast<size_t>(args[4]);
  if (length > kMaxMarkLabel) return regs->SkipWithResult(-ENAMETOOLONG);
  std::string label(length, '\0');
  if (length > 0 && !ReadTraceeBytes(tid, args[3], label.data(), length).ok()) {
    return regs->SkipWithResult(-EFAULT);
  }
  regs->SkipWithResult(sink->Mark(tid, label, (args[2] & kMarkStep) != 0));
}

long IssueMarkCall(std::string_view label, bool step) {
  label = CutMarkLabel(label);
  long rc = syscall(SYS_mkdirat, kMarkDirfd, nullptr, step ? kMarkStep : 0, label.data(), label.size(),
                    kMarkMagic);
  return rc < 0 ? -errno : rc;
}

}  // namespace guard
