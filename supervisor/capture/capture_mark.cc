// Capture::Mark: a labelled point in the session's timeline. Kept apart from
// capture.cc: a mark saves nothing and changes nothing; it is ordered among
// the operations by its sequence number alone (the tracer hands it over at
// the asking call's seccomp stop, between the Before() of the calls around it).
#include <cerrno>

#include "supervisor/capture/capture.h"

namespace guard {

long Capture::Mark(pid_t tid, std::string_view label, bool step) {
  Record r;
  r.kind = OpKind::kMark;
  r.pid = tid;
  r.comm = Comm(tid);
  r.label.assign(label);
  if (step) r.flags |= kStepMark;
  Status s = recorder_->Append(&r);
  if (!s.ok()) {
    log_->error("mark \"{}\" of tid {}: {}", r.label, tid, s.ToString());
    return -EIO;
  }
  ++marks_;
  log_->info("mark {} (seq {}) by tid {} ({}): {}{}", marks_, r.seq, tid, r.comm, r.label, step ? " [step]" : "");
  return static_cast<long>(marks_);
}

}  // namespace guard
