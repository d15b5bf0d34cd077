// Capture::Observed: a change seen after it happened (mutation.h,
// ObservedChange). Nothing can be held or refused; what the log must hold is
// the operation the change amounts to, with the producer's last saved state
// as its pre-image, and its outcome with the state saved now. A change of
// type (a file become a directory) is two operations: the removal of the old
// and the creation of the new. Every record is flagged kObserved (format
// 1.5), and the new state, saved already, is also the path's post-image:
// a guard killed after this leaves the session's work in the journal.
#include "supervisor/capture/capture.h"

#include "common/path_util.h"

namespace guard {

namespace {

// The creation of what `after` holds (not kAbsent).
OpKind CreationOf(const FileState& after) {
  switch (after.type) {
    case FileType::kDirectory:
      return OpKind::kMkdir;
    case FileType::kSymlink:
      return OpKind::kSymlink;
    case FileType::kOther:
      return OpKind::kMknod;
    default:
      return OpKind::kCreate;
  }
}

}  // namespace

bool Capture::Named(const std::string& abs) const {
  return PathIsUnder(abs, config_.root) && recorder_->HasFirstState(Relative(abs));
}

Status Capture::RecordUnseenCreation(const std::string& rel, const FileState& now) {
  if (now.type == FileType::kAbsent || now.type == FileType::kUnknown || rel.empty() || rel == "." ||
      recorder_->HasFirstState(rel) || existed_at_start_(rel)) {
    return Status::Ok();
  }
  // Made after the start by a call the shim did not see, and not yet seen
  // by the watcher either (or it would be named): its creation comes first,
  // so that undoing the session removes it.
  Record r;
  r.kind = CreationOf(now);
  r.syscall = "unseen";
  r.path = rel;
  r.flags = kObserved;
  if (r.kind == OpKind::kCreate || r.kind == OpKind::kMkdir || r.kind == OpKind::kMknod) r.new_mode = now.mode;
  if (r.kind == OpKind::kSymlink) r.target = now.symlink_target;
  GUARD_RETURN_IF_ERROR(recorder_->Append(&r));
  recorder_->NoteFirstState(rel, FileState());
  Record o;
  o.kind = OpKind::kOutcome;
  o.ref_seq = r.seq;
  o.flags = kObserved;
  o.after = now;
  GUARD_RETURN_IF_ERROR(recorder_->Append(&o));
  recorder_->NoteChanged(rel);
  return Status::Ok();
}

Status Capture::Observed(const ObservedChange& change) {
  auto guards = [&](const std::string& dir) { return !dir.empty() && PathIsUnder(change.abs, dir); };
  // The root itself: only its mode, as a call's record of "." has it (a
  // root removed or replaced is no change a restore into it could undo).
  const bool root_itself = change.abs == config_.root;
  if (root_itself && !(change.before.type == FileType::kDirectory && change.after.type == FileType::kDirectory)) {
    return Status::Ok();
  }
  if (!PathIsUnder(change.abs, config_.root) || guards(config_.state_dir) || guards(config_.inbox_dir) ||
      guards(config_.config_dir)) {
    return Status::Ok();
  }
  calls_.Count();
  calls_.Stamp(change.abs, nullptr, change.before.type == FileType::kDirectory);
  const FileState& before = change.before;
  const FileState& after = change.after;
  if (before.type == FileType::kAbsent && after.type == FileType::kAbsent) return Status::Ok();
  const std::string rel = Relative(change.abs);

  // One operation record and its outcome.
  auto record = [&](OpKind kind, const FileState& was, const FileState& left) -> Status {
    Record r;
    r.kind = kind;
    r.comm = change.comm;
    r.syscall = "observed";
    r.path = rel;
    r.flags = kObserved;
    if (change.before_not_captured && was.type == FileType::kRegular) {
      r.flags |= kNotCaptured;
      ++not_captured_;
    }
    r.before = was;
    if (kind == OpKind::kCreate || kind == OpKind::kMkdir || kind == OpKind::kMknod || kind == OpKind::kChmod) {
      r.new_mode = left.mode;
    }
    if (kind == OpKind::kSymlink) r.target = left.symlink_target;
    GUARD_RETURN_IF_ERROR(recorder_->Append(&r));
    // A baseline's clone (watched_tree.h): resolved at the seal, as a
    // pre-image linked or copied by the other producers is.
    if (was.type == FileType::kRegular && was.blob.kind == BlobRef::Kind::kPending) {
      recorder_->NotePending(was.blob.pending);
    }
    recorder_->NoteFirstState(rel, was);
    Record o;
    o.kind = OpKind::kOutcome;
    o.ref_seq = r.seq;
    o.flags = kObserved;
    o.after = left;
    GUARD_RETURN_IF_ERROR(recorder_->Append(&o));
    recorder_->NoteChanged(rel);
    // The post-image: what the path holds now, by the signature it was
    // read with (work_saver.h writes the same record in the other modes).
    Record p;
    p.kind = OpKind::kFinal;
    p.flags = kPostImage | kObserved;
    p.path = rel;
    p.after = left;
    return recorder_->Append(&p);
  };

  FileState absent;
  if (before.type == FileType::kAbsent) return record(CreationOf(after), absent, after);
  const OpKind removal = before.type == FileType::kDirectory ? OpKind::kRmdir : OpKind::kDelete;
  if (after.type == FileType::kAbsent) return record(removal, before, absent);
  if (before.type != after.type || before.type == FileType::kSymlink || before.type == FileType::kOther) {
    GUARD_RETURN_IF_ERROR(record(removal, before, absent));
    return record(CreationOf(after), absent, after);
  }
  if (before.type == FileType::kDirectory) {
    if (before.mode == after.mode) return Status::Ok();
    return record(OpKind::kChmod, before, after);
  }
  // Both regular files: its content (and perhaps its mode) changed.
  if (before.blob == after.blob && before.size == after.size && before.mode != after.mode) {
    return record(OpKind::kChmod, before, after);
  }
  return record(OpKind::kModify, before, after);
}

}  // namespace guard
