// Calls guard predicts will fail that another process could let succeed
// (Capture::Described::kIfItSucceeds): recorded only once they have, after
// the fact, with what their paths held just before them as far as what they
// left tells.
//
// Why that is enough: each of them, to succeed, needs a change another
// process made between guard's look at its paths and the call (a
// destination removed for a RENAME_NOREPLACE, a source made for a link, a
// missing side of an exchange made). That change has its own record, earlier
// than this late one, so the first state of every path of the session is
// still a record's made before the path changed. What the late record says
// of the moment just before its call is then true by the call's own rules:
// a RENAME_NOREPLACE or a link found its destination free; a renamed,
// exchanged or linked file keeps its inode, so its state now, apart from
// its ctime, is the one it had.
//
// What this cannot do: refuse the call (it has run), or carry the entries
// of a directory that crossed the root's edge in such a call (the record
// says kNotCaptured). A supervisor killed between the call and its result
// loses the record; so does a thread that dies inside the call (its outcome
// is never known, and a record claiming a free destination could then undo
// a file that was never replaced).
#include <cerrno>

#include "supervisor/capture/capture.h"
#include "supervisor/capture/file_state.h"
#include "supervisor/capture/saver_call.h"

namespace guard {

Verdict Capture::AwaitLate(pid_t tid, const std::string& abs, const std::string& abs2, Record r,
                           bool states_taken) {
  PendingOp& op = calls_.Open(tid);
  op = PendingOp();
  op.abs_path = abs;
  op.abs_path2 = abs2;
  op.late_states_taken = states_taken;
  op.rel_path = !(r.flags & kOutsideRoot) ? r.path : std::string();
  op.rel_path2 = !r.path2.empty() && !(r.flags & kOutsideRoot2) ? r.path2 : std::string();
  // It may move a directory (a rename, an exchange): other calls' outcomes
  // are not learnt from the tree meanwhile (CallsInFlight::Quiet).
  op.moves_names_below = r.kind == OpKind::kRename || r.kind == OpKind::kExchange;
  op.late = std::move(r);
  Verdict v;
  v.watch_exit = true;
  return v;
}

bool Capture::RecordLate(PendingOp* op, int32_t result_errno, const FileState* after) {
  Record r = std::move(*op->late);
  op->late.reset();
  if (result_errno != 0) return false;  // it failed, as predicted
  const bool inside = !(r.flags & kOutsideRoot);
  const bool inside2 = !r.path2.empty() && !(r.flags & kOutsideRoot2);
  Status error;
  if (OrderOnly(r.kind)) {
    // It removed or changed a file that no call guard held it for had put
    // there (one outside the session, or unseen): what that file held
    // before is not known.
    r.before = FileState();
    r.before.type = FileType::kUnknown;
    r.flags |= kAfterItRan | kNotCaptured;
    ++not_captured_;
    log_->error("not captured (the call had run): {} of {} succeeded where it was expected to fail", r.syscall,
                r.path);
    return AppendLate(op, std::move(r), inside, inside2);
  }
  // What a name the call succeeded in making or filling held: nothing.
  auto was_free = [](bool in, FileState* out) {
    *out = FileState();
    if (!in) out->type = FileType::kUnknown;
  };
  if (op->late_states_taken) {
    // The producer's states from before the call (the shim's), but for a
    // name they show missing that the call needed there: it was made in
    // between, and holds now, at the other name, what the call found
    // (`after`, the producer's look right after it), else it is unknown.
    auto found = [&](FileState* out) {
      if (out->type != FileType::kAbsent) return;
      if (after != nullptr) *out = *after;
      else out->type = FileType::kUnknown;
    };
    switch (r.kind) {
      case OpKind::kRename:  // RENAME_NOREPLACE
      case OpKind::kLink:
        found(&r.before);
        was_free(inside2, &r.before2);
        break;
      case OpKind::kExchange:
        found(&r.before);
        if (r.before2.type == FileType::kAbsent) r.before2.type = FileType::kUnknown;
        break;
      default:  // a creation
        was_free(inside, &r.before);
        break;
    }
  } else {
    // The tree now (the thread is at its exit stop): a file keeps its inode
    // through a rename, an exchange or a link, and with it its type, mode,
    // size and mtime. Content is read only of what crossed the root's edge.
    auto now = [&](const std::string& abs, bool in, bool crossed, FileState* out) {
      if (!in) {
        out->type = FileType::kUnknown;
        return;
      }
      Status s = CaptureFileState(abs, recorder_->store(),
                                  crossed ? ContentCapture::kCopy : ContentCapture::kNone, out);
      if (!s.ok() && error.ok()) error = s;
      out->dev = out->ino = 0;
      out->ctime_ns = 0;
    };
    switch (r.kind) {
      case OpKind::kRename:  // RENAME_NOREPLACE: the source is at the destination, which was free
        now(op->abs_path2, inside, inside != inside2, &r.before);
        was_free(inside2, &r.before2);
        break;
      case OpKind::kExchange:  // each side holds what the other did
        now(op->abs_path2, inside, inside != inside2, &r.before);
        now(op->abs_path, inside2, inside != inside2, &r.before2);
        break;
      case OpKind::kLink:  // the file linked is as it was; the new name was free
        now(op->abs_path, inside, false, &r.before);
        was_free(inside2, &r.before2);
        break;
      default:  // a creation (kCreate, kMkdir, kSymlink, kMknod): the name was free
        was_free(inside, &r.before);
        break;
    }
  }
  r.flags |= kAfterItRan;
  if (inside != inside2 &&
      (r.before.type == FileType::kDirectory || r.before2.type == FileType::kDirectory) && error.ok()) {
    error = Status::Unsupported("a directory crossed the root's edge in a call guard expected to fail");
  }
  if (!error.ok()) {
    r.flags |= kNotCaptured;
    ++not_captured_;
    log_->error("not captured (the call had run): {}: {}", r.path, error.ToString());
  }
  return AppendLate(op, std::move(r), inside, inside2);
}

bool Capture::AppendLate(PendingOp* op, Record r, bool inside, bool inside2) {
  if (saver_ != nullptr) {
    op->call = CallOf(r, inside, inside2, false, {});
    if (!op->call.empty()) saver_->CallBegins(op->call);
  }
  Status s = recorder_->Append(&r);
  if (!s.ok()) {
    log_->error("cannot record {} of {}, which ran against guard's prediction: {}", r.syscall, r.path,
                s.ToString());
    EndCall(*op, /*happened=*/true);
    if (inside) recorder_->NoteChanged(r.path);
    if (inside2) recorder_->NoteChanged(r.path2);
    return false;
  }
  log_->info("{} of {} by pid {} succeeded where it was expected to fail: recorded after it ran (op {})",
             r.syscall, r.path, r.pid, r.seq);
  if (inside) recorder_->NoteFirstState(r.path, r.before);
  if (inside2) recorder_->NoteFirstState(r.path2, r.before2);
  op->seq = r.seq;
  op->names_a_file = (r.kind == OpKind::kLink || r.kind == OpKind::kRename) && inside2;
  op->moves_directory = MovesDirectoryWithinRoot(r);
  return true;
}

}  // namespace guard
