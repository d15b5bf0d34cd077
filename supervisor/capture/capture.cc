#include "supervisor/capture/capture.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/blob_append_format.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/capture/carried_entries.h"
#include "supervisor/capture/file_state.h"
#include "supervisor/capture/saver_call.h"

namespace guard {

using Action = MutationRequest::Action;

struct Capture::Target {
  std::string abs, abs2;
  bool inside = false, inside2 = false;
  bool has2 = false;
  bool foreign = false, foreign2 = false;
  // The lstat of abs (abs2): the producer's (Mutation::abs_lstat), else
  // made on first use; one for the whole stop, whoever asks.
  const KnownLstat& Lstat() const { return Made(abs, &lstat); }
  const KnownLstat& Lstat2() const { return Made(abs2, &lstat2); }
  mutable KnownLstat lstat, lstat2;
  // Saved before the call by a producer that reports it after (the shim).
  const Mutation::PreCaptured* pre = nullptr;

 private:
  static const KnownLstat& Made(const std::string& path, KnownLstat* k) {
    if (!k->made) *k = KnownLstat::Of(path);
    return *k;
  }
};

namespace {

constexpr int kRestartErrnoMin = 512;  // ERESTARTSYS .. ERESTART_RESTARTBLOCK: the call
constexpr int kRestartErrnoMax = 516;  // did not happen and will be made again

// /proc/PID/mem or /proc/PID/task/TID/mem: writing it changes another
// process's memory (guard's own, were it the target).
bool IsProcessMemory(const std::string& p) {
  auto digits = [&](size_t* i) {
    size_t start = *i;
    while (*i < p.size() && p[*i] >= '0' && p[*i] <= '9') ++*i;
    return *i > start;
  };
  if (p.compare(0, 6, "/proc/") != 0) return false;
  size_t i = 6;
  if (!digits(&i)) return false;
  if (p.compare(i, 6, "/task/") == 0) {
    i += 6;
    if (!digits(&i)) return false;
  }
  return p.compare(i, std::string::npos, "/mem") == 0;
}

// Calls that change the inode their path names (its content, mode, or
// names), as opposed to the directory entry.
bool ChangesInodeInPlace(Action a) {
  return a == Action::kOpen || a == Action::kTruncate || a == Action::kFtruncate ||
         a == Action::kChmod || a == Action::kFchmod || a == Action::kLink || a == Action::kChown ||
         a == Action::kFchown || a == Action::kSetAcl || a == Action::kFsetAcl;
}

// Kernel pseudo-filesystems: writes there change no file a user keeps.
bool IsPseudoPath(const std::string& p) {
  return PathIsUnder(p, "/proc") || PathIsUnder(p, "/sys") || PathIsUnder(p, "/dev");
}

// The mode a chown or an ACL write (kChown, kFchown, kSetAcl, kFsetAcl)
// will leave on a file whose lstat is `st`; false when it leaves the mode as
// it is, as far as guard can tell beforehand.
bool ModeChangeOf(const MutationRequest& req, const struct stat& st, uint32_t* after) {
  const uint32_t mode = st.st_mode & 07777;
  if (S_ISLNK(st.st_mode)) return false;  // a symlink has no mode to change
  if (req.action == Action::kChown || req.action == Action::kFchown) {
    // The kernel clears set-uid, and set-gid when group execute is set
    // (set-gid without it marks mandatory locking), of any non-directory,
    // even when the owner stays the same.
    if (S_ISDIR(st.st_mode)) return false;
    *after = mode & ~static_cast<uint32_t>(S_ISUID);
    if (mode & S_IXGRP) *after &= ~static_cast<uint32_t>(S_ISGID);
    return *after != mode;
  }
  // The ACL's permission bits replace the mode's (set-id bits kept, set-gid
  // possibly cleared: the outcome tells); an unreadable ACL may set any.
  *after = req.mode == kAclModeUnknown ? mode : (mode & 07000) | (req.mode & 0777);
  return true;
}

}  // namespace

Capture::Capture(CaptureConfig config, CaptureLog* log, std::shared_ptr<spdlog::logger> logger, CallObserver* saver)
    : config_(std::move(config)),
      recorder_(log),
      log_(std::move(logger)),
      saver_(saver),
      links_(config_.root, config_.state_dir) {}

const std::string& Capture::Comm(pid_t tid) {
  auto it = comm_.find(tid);
  if (it != comm_.end()) return it->second;
  std::string name;
  if (ReadFileToString("/proc/" + std::to_string(tid) + "/comm", &name).ok() && !name.empty() &&
      name.back() == '\n') {
    name.pop_back();
  }
  return comm_.emplace(tid, name).first->second;
}

std::string Capture::Relative(const std::string& abs) const { return PathRelativeTo(abs, config_.root); }

void Capture::Classify(const Mutation& m, const CaptureConfig& config, Target* t) {
  t->abs = m.abs;
  t->abs2 = m.abs2;
  t->has2 = m.has2;
  // A foreign name (mutation.h) reads like a path of guard's but is not one.
  t->foreign = m.foreign;
  t->foreign2 = m.foreign2;
  t->lstat = m.abs_lstat;
  t->lstat2 = m.has2 ? m.abs2_lstat : KnownLstat();
  if (m.pre.present) t->pre = &m.pre;
  auto guards = [&](const std::string& p) {
    return PathIsUnder(p, config.state_dir) || (!config.inbox_dir.empty() && PathIsUnder(p, config.inbox_dir)) ||
           (!config.config_dir.empty() && PathIsUnder(p, config.config_dir));
  };
  t->inside = !t->foreign && PathIsUnder(t->abs, config.root) && !guards(t->abs);
  t->inside2 = t->has2 && !t->foreign2 && PathIsUnder(t->abs2, config.root) && !guards(t->abs2);
}

Verdict Capture::Unresolved(const Mutation& m) {
  Verdict v;
  // The call fails by itself just the same: nothing to save.
  if (m.refuse_errno == 0) return v;
  // guard cannot name what the call would change, so it cannot save it:
  // the same choice, counted and said the same way, as when the store
  // fails; never a silent pass.
  std::string what = m.req.path.empty() ? std::string(m.req.syscall) : m.req.path;
  if (MayProceedUncaptured(what, m.resolve_error, &v)) return v;
  v.deny_errno = m.refuse_errno;
  return v;
}

bool Capture::IsProtected(const MutationRequest& req, const Target& t) const {
  for (const std::string* dir : {&config_.state_dir, &config_.inbox_dir, &config_.config_dir}) {
    const std::string& sd = *dir;
    if (sd.empty()) continue;
    if ((!t.foreign && PathIsUnder(t.abs, sd)) || (t.has2 && !t.foreign2 && PathIsUnder(t.abs2, sd))) return true;
    // Renaming a directory that holds the state directory would take the log
    // with it (removing one fails anyway while the log is in it); so would
    // exchanging it, from either side.
    if (req.action != Action::kRename) continue;
    if (PathIsUnder(sd, t.abs) || ((req.flags & RENAME_EXCHANGE) && PathIsUnder(sd, t.abs2))) return true;
  }
  return false;
}

bool Capture::IsHarmless(const MutationRequest& req, const Target& t) const {
  // guard's own commands, run under an outer guard (undo, replay), open the
  // state directory with mkdir -p semantics: an mkdir of an existing
  // directory fails with EEXIST by itself and changes nothing.
  return req.action == Action::kMkdir && t.Lstat().exists();
}

void Capture::DropUnrecordedPending(const Record& r) {
  for (const FileState* f : {&r.before, &r.before2}) {
    if (f->blob.kind == BlobRef::Kind::kPending) {
      unlink((recorder_->store()->dir() + "/pending/" + f->blob.pending).c_str());
    }
  }
}

Verdict Capture::Refuse(const std::string& what, const Status& why) {
  Verdict v;
  v.deny_errno = why.IsNoSpace() ? ENOSPC : EIO;
  if (refused_++ == 0) {
    std::fprintf(stderr,
                 "guard: cannot save the pre-image of %s (%s); the change was refused "
                 "(--on-capture-failure=block)\n",
                 EscapeForTerminal(what).c_str(), EscapeForTerminal(why.ToString()).c_str());
  }
  log_->error("refused a change to {}: {}", what, why.ToString());
  return v;
}

Capture::Described Capture::Describe(const MutationRequest& req, const Target& t, Record* r, Status* capture_error) {
  BlobStore* store = recorder_->store();
  const bool exists = t.Lstat().exists();
  const struct stat& st = t.Lstat().st;
  r->path = t.inside ? Relative(t.abs) : t.abs;
  if (!t.inside) r->flags |= kOutsideRoot;
  if (t.has2) {
    r->path2 = t.inside2 ? Relative(t.abs2) : t.abs2;
    if (!t.inside2) r->flags |= kOutsideRoot2;
  }
  // Outside the root guard keeps names only: no content, no metadata.
  // The state of abs (second: abs2).
  auto state = [&](bool second, ContentCapture how, FileState* out) {
    if (!(second ? t.inside2 : t.inside)) {
      out->type = FileType::kUnknown;
      return;
    }
    Status s;
    if (t.pre != nullptr) {
      if (second) {
        s = SavedFileState(t.Lstat2(), t.pre->target2, t.pre->pending2, how, out);
      } else if (t.pre->has_content) {
        s = SavedFileStateWithContent(t.Lstat(), t.pre->content, store, how, out);
      } else {
        s = SavedFileState(t.Lstat(), t.pre->target, t.pre->pending, how, out);
      }
    } else {
      // A file that only grew since the session last stored it (a log
      // opened with `>>`) is stored as that version and the bytes
      // appended; the store checks that it is so (saved_versions.h).
      SavedVersions* versions = how == ContentCapture::kCopy ? recorder_->versions() : nullptr;
      const std::string& rel = second ? r->path2 : r->path;
      SavedVersion latest;
      const SavedVersion* grown = versions != nullptr && versions->Latest(rel, &latest) ? &latest : nullptr;
      s = second ? CaptureFileStateFrom(t.abs2, t.Lstat2(), store, how, out, nullptr, grown)
                 : CaptureFileStateFrom(t.abs, t.Lstat(), store, how, out, nullptr, grown);
      if (s.ok() && versions != nullptr) versions->Note(rel, *out);
    }
    if (!s.ok() && capture_error->ok()) *capture_error = s;
  };

  switch (req.action) {
    case Action::kOpen:
      if ((req.flags & O_TMPFILE) == O_TMPFILE) return Described::kNothing;  // anonymous until linkat
      if (!exists) {
        if (!(req.flags & O_CREAT)) {
          // ENOENT, unless another process makes the name first: then it
          // opens that file for writing (OrderOnly).
          r->kind = OpKind::kModify;
          return Described::kIfItSucceeds;
        }
        r->kind = OpKind::kCreate;
        r->new_mode = req.mode & 07777;
        return Described::kRecord;
      }
      if ((req.flags & O_CREAT) && (req.flags & O_EXCL)) {
        // EEXIST, unless another process removes the name first: then it
        // makes a file (capture_late.cc).
        r->kind = OpKind::kCreate;
        r->new_mode = req.mode & 07777;
        return Described::kIfItSucceeds;
      }
      if (!S_ISREG(st.st_mode)) return Described::kNothing;  // directories fail; devices and fifos hold no file
      r->kind = OpKind::kModify;
      state(false, ContentCapture::kCopy, &r->before);
      return Described::kRecord;
    case Action::kTruncate:
    case Action::kFtruncate:
      if (!exists && req.action == Action::kTruncate) {
        r->kind = OpKind::kModify;  // ENOENT, unless the name is made first
        return Described::kIfItSucceeds;
      }
      if (!exists || !S_ISREG(st.st_mode)) return Described::kNothing;
      r->kind = OpKind::kModify;
      state(false, ContentCapture::kCopy, &r->before);
      return Described::kRecord;
    case Action::kRename: {
      if (t.abs == t.abs2) return Described::kNothing;  // succeeds and changes nothing
      bool exists2 = t.Lstat2().exists();
      if (req.flags & RENAME_EXCHANGE) {
        r->kind = OpKind::kExchange;
        // Both must exist: were a missing one made meanwhile, the other
        // would go where no record names it.
        if (!exists || !exists2) return Described::kIfItSucceeds;
        // Contents swap places: both stay in the tree, so metadata suffices
        // unless one side leaves the root.
        state(false, t.inside2 ? ContentCapture::kNone : ContentCapture::kCopy, &r->before);
        state(true, t.inside ? ContentCapture::kNone : ContentCapture::kCopy, &r->before2);
        return Described::kRecord;
      }
      r->kind = OpKind::kRename;
      // A taken destination, with RENAME_NOREPLACE: were it removed
      // meanwhile, the source would go where no record names it.
      if ((req.flags & RENAME_NOREPLACE) && exists2) return Described::kIfItSucceeds;
      // An absent source is recorded as such, with what the destination
      // holds, before the call: were the source made meanwhile, it would
      // replace that (the outcome tells whether it did; learned_outcome.h
      // keeps its exit stop). The source's content moves with it; it is
      // needed only when it leaves the root. What the destination held is
      // replaced: save it.
      state(false, t.inside2 ? ContentCapture::kNone : ContentCapture::kCopy, &r->before);
      state(true, ContentCapture::kLinkOrCopy, &r->before2);
      return Described::kRecord;
    }
    case Action::kUnlink:
      r->kind = OpKind::kDelete;
      // ENOENT or EISDIR, unless another process puts a file there first
      // (a rename, an exchange, a creation): then it removes that file.
      if (!exists || S_ISDIR(st.st_mode)) return Described::kIfItSucceeds;
      state(false, ContentCapture::kLinkOrCopy, &r->before);
      return Described::kRecord;
    case Action::kRmdir:
      r->kind = OpKind::kRmdir;
      if (!exists || !S_ISDIR(st.st_mode)) return Described::kIfItSucceeds;  // as an unlink's
      state(false, ContentCapture::kNone, &r->before);
      return Described::kRecord;
    // A creation of a taken name fails (EEXIST), unless another process
    // removes the name first (capture_late.cc).
    case Action::kMkdir:
      r->kind = OpKind::kMkdir;
      r->new_mode = req.mode & 07777;
      return exists ? Described::kIfItSucceeds : Described::kRecord;
    case Action::kSymlink:
      r->kind = OpKind::kSymlink;
      r->target = req.target;
      return exists ? Described::kIfItSucceeds : Described::kRecord;
    case Action::kLink: {
      r->kind = OpKind::kLink;
      // An absent source, or a taken new name: were the source made, or
      // the name removed, meanwhile, the link would make a name no record
      // names.
      if (!exists || t.Lstat2().exists()) return Described::kIfItSucceeds;
      state(false, ContentCapture::kNone, &r->before);
      return Described::kRecord;
    }
    case Action::kChmod:
    case Action::kFchmod:
      r->kind = OpKind::kChmod;
      r->new_mode = req.mode & 07777;
      if (!exists) return Described::kIfItSucceeds;  // ENOENT, unless the name is made first
      state(false, ContentCapture::kNone, &r->before);
      return Described::kRecord;
    case Action::kChown:
    case Action::kFchown:
    case Action::kSetAcl:
    case Action::kFsetAcl: {
      // Recorded as the chmod they amount to (guard keeps no owner nor ACL),
      // and only when they change the mode: the outcome's state says which
      // mode they left.
      uint32_t after = 0;
      if (!exists || !ModeChangeOf(req, st, &after)) return Described::kNothing;
      r->kind = OpKind::kChmod;
      r->new_mode = after;
      state(false, ContentCapture::kNone, &r->before);
      return Described::kRecord;
    }
    case Action::kMknod:
      r->kind = (req.mode & S_IFMT) == 0 || S_ISREG(req.mode) ? OpKind::kCreate : OpKind::kMknod;
      r->new_mode = req.mode & 07777;
      return exists ? Described::kIfItSucceeds : Described::kRecord;
  }
  return Described::kNothing;
}

Status Capture::DescribeCarried(const Target& t, const Record& r, std::vector<Record>* leaving,
                                std::vector<Record>* arriving, bool* dir_arrives) {
  *dir_arrives = false;
  bool exchange = r.kind == OpKind::kExchange;
  if ((r.kind != OpKind::kRename && !exchange) || !t.has2 || t.inside == t.inside2) return Status::Ok();
  const std::string& in_abs = t.inside ? t.abs : t.abs2;
  const std::string& out_abs = t.inside ? t.abs2 : t.abs;
  // Renaming the root itself takes the whole tree away: a documented limit,
  // not a tree to copy (docs/capture.md).
  if (in_abs == config_.root) return Status::Ok();
  // A rename to another filesystem fails with EXDEV (mv then copies and
  // removes file by file, each call recorded as usual): nothing to carry.
  // (The source against the directory the destination goes into.)
  struct stat to_st;
  const struct stat& from_st = t.Lstat().st;
  std::string to_dir = exchange ? t.abs2 : ParentDir(t.abs2);
  int to_rc = exchange ? lstat(to_dir.c_str(), &to_st) : stat(to_dir.c_str(), &to_st);
  if (!t.Lstat().exists() || to_rc != 0 ||
      from_st.st_dev != to_st.st_dev) {
    return Status::Ok();
  }
  auto is_dir = [](const std::string& p) {
    struct stat st;
    return lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  Status error;
  // What the inside name holds leaves the root: the source of a rename out,
  // either side of an exchange.
  if ((t.inside || exchange) && is_dir(in_abs)) {
    error = DescribeLeavingEntries(config_.root, Relative(in_abs), recorder_->store(), leaving);
  }
  // What the outside name holds enters the root at the inside name.
  if ((t.inside2 || exchange) && !IsPseudoPath(out_abs) && is_dir(out_abs)) {
    *dir_arrives = true;
    // What cannot be read is left out here; the seal records it.
    // What it cannot list enters unrecorded: a creation has no pre-image to
    // lose, and the seal records the end state of everything below the
    // moved directory (NoteMovedDirectory) all the same.
    if (Status walk = DescribeArrivingEntries(out_abs, Relative(in_abs), arriving); !walk.ok()) {
      log_->warn("entries arriving with {}: {}", in_abs, walk.ToString());
    }
  }
  return error;
}

void Capture::DescribeSameInode(const Target& t, const Record& r, std::vector<Record>* same) {
  if (!t.inside || (r.kind != OpKind::kModify && r.kind != OpKind::kChmod) ||
      r.before.type != FileType::kRegular) {
    return;
  }
  const struct stat& st = t.Lstat().st;
  if (!t.Lstat().exists() || !S_ISREG(st.st_mode) || st.st_nlink < 2) return;
  for (std::string& name : links_.OtherNames(r.path, st.st_dev, st.st_ino)) {
    Record c = r;
    c.path = std::move(name);
    c.flags |= kSameInode;
    same->push_back(std::move(c));
  }
}

Status Capture::AppendCarried(const Record& r, std::vector<Record>* carried, PendingOp* op) {
  for (Record& c : *carried) {
    c.pid = r.pid;
    c.comm = r.comm;
    c.syscall = r.syscall;
    GUARD_RETURN_IF_ERROR(recorder_->Append(&c));
    op->carried.emplace_back(c.seq, c.path);
    recorder_->NoteFirstState(c.path, c.before);
  }
  return Status::Ok();
}

bool Capture::MayProceedUncaptured(const std::string& what, const Status& error, Verdict* v) {
  if (error.ok()) return true;
  if (config_.on_failure == CaptureFailurePolicy::kBlock && !ran_already_) {
    *v = Refuse(what, error);
    return false;
  }
  if (ran_already_) {
    // Reported by a producer after the call ran (the shim): nothing left to
    // refuse; the record says what could not be kept (kNotCaptured). The
    // user hears of it as of a change "allow" let through.
    if (not_captured_++ == 0 && config_.on_failure == CaptureFailurePolicy::kAllow) {
      std::fprintf(stderr,
                   "guard: cannot save the pre-image of %s (%s); the change was allowed unrecorded "
                   "(--on-capture-failure=allow)\n",
                   EscapeForTerminal(what).c_str(), EscapeForTerminal(error.ToString()).c_str());
    }
    log_->error("not captured (the call had run): {}: {}", what, error.ToString());
    return true;
  }
  if (not_captured_++ == 0) {
    std::fprintf(stderr,
                 "guard: cannot save the pre-image of %s (%s); the change was allowed unrecorded "
                 "(--on-capture-failure=allow)\n",
                 EscapeForTerminal(what).c_str(), EscapeForTerminal(error.ToString()).c_str());
  }
  log_->warn("not captured (allowed by policy): {}: {}", what, error.ToString());
  return true;
}

Status Capture::DetachIfAdopted(dev_t dev, ino_t ino, bool* was) {
  *was = false;
  auto it = adopted_.find({dev, ino});
  if (it == adopted_.end()) return Status::Ok();
  *was = true;
  const std::string& name = recorder_->PendingName(it->second);
  GUARD_RETURN_IF_ERROR(recorder_->store()->DetachPending(name));
  log_->info("pending blob {} copied: its inode may still be written through an open fd", name);
  adopted_.erase(it);
  return Status::Ok();
}

bool Capture::NameUnnamed(const Mutation& m, Mutation* named, Verdict* v) {
  const struct stat& st = m.unnamed_st;
  // Pipes, sockets, anonymous inodes, a deleted directory: no file to keep.
  if (!S_ISREG(st.st_mode)) return false;
  bool was = false;
  Status s = DetachIfAdopted(st.st_dev, st.st_ino, &was);
  if (!MayProceedUncaptured(m.abs, s, v)) return false;
  nlink_t links = st.st_nlink - (was && s.ok() ? 1 : 0);
  *named = m;
  named->unnamed = false;
  if (m.req.action == Action::kLink) {
    // A name for a file that had none (O_TMPFILE, or a deleted file linked
    // back): a new file appears there, which undo removes.
    named->abs = m.abs2;
    named->foreign = m.foreign2;
    named->abs_lstat = m.abs2_lstat;
    named->abs2.clear();
    named->abs2_lstat = KnownLstat();
    named->has2 = false;
    named->req.action = Action::kMknod;
    named->req.mode = S_IFREG | (st.st_mode & 07777);
    return true;
  }
  // No name left anywhere: nothing guard keeps changes.
  if (links == 0) return false;
  // Its other names (the tree kept a hard link of a deleted name).
  std::vector<std::string> names = links_.OtherNames(std::string(), st.st_dev, st.st_ino);
  if (names.empty()) names = links_.Search(st.st_dev, st.st_ino);
  if (names.empty()) {
    MayProceedUncaptured(m.abs,
                         Status::Unsupported("an open file whose name is gone has another link, "
                                             "which guard cannot find under the root"),
                         v);
    return false;
  }
  named->abs = PathJoin(config_.root, names.front());
  named->foreign = false;  // a name guard found under its own root
  named->abs_lstat = KnownLstat();
  return true;
}

void Capture::EndCall(const PendingOp& op, bool happened) {
  if (saver_ != nullptr && !op.call.empty()) saver_->CallEnds(op.call, happened);
}

// The life of one call in the core: the calls in flight learn of it (a
// stale one is settled, a call on the same names holds it), it is admitted
// or refused by what it names, what it will destroy is looked at and saved,
// and its records are appended; the verdict says how its end is to be
// reported.
Verdict Capture::Before(const Mutation& m) {
  // A call reported after it ran cannot be refused: every failure to keep
  // something of it is recorded as such instead.
  ran_already_ = m.pre.present;
  const pid_t tid = m.tid;
  if (std::optional<PendingOp> stale = calls_.Take(tid)) {
    // A call whose end was never reported (the producer missed a stop): it
    // may have happened.
    LeaveUnknown(*stale);
    DetachIfStillInTree(*stale);
  }
  calls_.Count();
  if (!m.resolve_error.ok()) {
    // A call whose names guard could not resolve (a parent missing: it
    // fails by itself, unrecorded) may find them made by a move in flight.
    if (m.holdable && m.held_ns < kHoldLimitNs) {
      if (pid_t other = calls_.MoverInFlight(tid); other != 0) {
        Verdict held;
        held.wait_for = other;
        return held;
      }
    }
    calls_.StampUnknown();  // what it names is not known
    return Unresolved(m);
  }
  Verdict v;
  if (m.unnamed) {
    Mutation named;
    if (!NameUnnamed(m, &named, &v)) return v;
    return Before(named);
  }
  Target t;
  Classify(m, config_, &t);
  if (m.holdable && m.held_ns < kHoldLimitNs) {
    // A call of another thread on the same name (or moving a directory
    // above it), let run and not yet seen to end, may not have run yet:
    // this call's pre-image would then be of what that one changes, and its
    // record would come first while its call came second (an unlink saving
    // one file and removing the one a rename had just put there). Held
    // until that one has ended, or for kHoldLimitNs.
    if (pid_t other = calls_.HolderOf(tid, t.abs, t.has2 ? &t.abs2 : nullptr); other != 0) {
      v.wait_for = other;
      return v;
    }
  }
  const bool moves_names_below = Stamp(m.req, t);
  if (!Admit(m, t, &v)) return v;
  if (!DetachAdoptedTarget(m.req, &t, &v)) return v;

  Record r;
  Status capture_error;
  switch (Look(m, &t, &r, &capture_error)) {
    case Described::kNothing:
      return v;
    case Described::kIfItSucceeds:
      // A call that would change what another process put at its name
      // meanwhile is held in flight only by a producer that can hold others
      // for it (the tracer); the shim takes the name's lock instead.
      if (OrderOnly(r.kind) && (t.pre != nullptr || !m.holdable)) return v;
      return AwaitLateCall(m, t, std::move(r));
    case Described::kRecord:
      break;
  }
  if (!MayProceedUncaptured(r.path, capture_error, &v)) {
    // Refused: a link made into pending/ for one of its names before the
    // other failed belongs to no record.
    if (t.pre == nullptr) DropUnrecordedPending(r);
    return v;
  }
  if (!capture_error.ok()) r.flags |= kNotCaptured;
  return RecordCall(m, t, std::move(r), moves_names_below);
}

bool Capture::Admit(const Mutation& m, const Target& t, Verdict* v) {
  const MutationRequest& req = m.req;
  if (IsProtected(req, t) && !IsHarmless(req, t)) {
    log_->warn("refused {} of {} by pid {} ({}): guard's own state", req.syscall, t.abs, m.tid, Comm(m.tid));
    v->deny_errno = EACCES;
    return false;
  }
  if (req.action == Action::kOpen && IsProcessMemory(t.abs)) {
    log_->warn("refused {} of {} for writing by pid {} ({}): another process's memory", req.syscall,
               t.abs, m.tid, Comm(m.tid));
    v->deny_errno = EACCES;
    return false;
  }
  if (!t.inside && !(t.has2 && t.inside2)) {
    // Outside the root: recorded by name only, and only for real files
    // guard can name (a foreign name is not one of guard's: mutation.h).
    if (IsPseudoPath(t.abs) || (t.foreign && (!t.has2 || t.foreign2))) return false;
  }
  return true;
}

bool Capture::DetachAdoptedTarget(const MutationRequest& req, Target* t, Verdict* v) {
  if (adopted_.empty() || !ChangesInodeInPlace(req.action)) return true;
  // The file was adopted by an earlier delete or rename over it that has
  // not run yet (another thread's, stopped meanwhile): it is still here by
  // name, and this call would change the pre-image.
  const struct stat& st = t->Lstat().st;
  bool was = false;
  if (t->Lstat().exists() && !MayProceedUncaptured(t->abs, DetachIfAdopted(st.st_dev, st.st_ino, &was), v)) {
    return false;
  }
  // The store's link is gone: the file's link count is one less.
  if (was) t->lstat = KnownLstat();
  return true;
}

Capture::Described Capture::Look(const Mutation& m, Target* t, Record* r, Status* capture_error) {
  Described described = Described::kNothing;
  for (int look = 0;; ++look) {
    *r = Record();
    r->pid = m.tid;
    r->comm = m.comm.empty() ? Comm(m.tid) : m.comm;
    r->syscall = m.req.syscall;
    *capture_error = Status::Ok();
    described = Describe(m.req, *t, r, capture_error);
    // A name that another process removed or renamed away between guard's
    // lstat and its copy: the call now meets what is there instead (an
    // O_CREAT|O_TRUNC open makes a file, an unlink fails), so guard looks
    // again, a few times, rather than failing the capture. The shim's
    // pre-images were taken before its call: nothing to look at again.
    if (capture_error->ok() || !capture_error->IsNotFound() || t->pre != nullptr || look == 2) break;
    DropUnrecordedPending(*r);
    t->lstat = KnownLstat();
    t->lstat2 = KnownLstat();
  }
  return described;
}

Verdict Capture::AwaitLateCall(const Mutation& m, const Target& t, Record r) {
  if (t.pre != nullptr) {
    // The shim's lstats of the paths, from before the call: what they
    // held then, but for what the call's success proves otherwise
    // (RecordLate). Metadata alone: the content of what such a call
    // moves stays in the tree.
    // Outside the root: unknown, as every state there.
    Status ignored;
    if (t.inside) {
      ignored = SavedFileState(t.Lstat(), t.pre->target, std::string(), ContentCapture::kNone, &r.before);
    } else {
      r.before.type = FileType::kUnknown;
    }
    if (t.has2 && t.inside2) {
      ignored = SavedFileState(t.Lstat2(), t.pre->target2, std::string(), ContentCapture::kNone, &r.before2);
    } else if (t.has2) {
      r.before2.type = FileType::kUnknown;
    }
  }
  Verdict v = AwaitLate(m.tid, t.abs, t.has2 ? t.abs2 : std::string(), std::move(r), t.pre != nullptr);
  calls_.Open(m.tid).holdable = m.holdable;
  return v;
}

Verdict Capture::RecordCall(const Mutation& m, const Target& t, Record r, bool moves_names_below) {
  const pid_t tid = m.tid;
  Verdict v;
  // A directory crossing the root boundary carries what it holds along:
  // removals recorded before the rename, creations after it.
  std::vector<Record> leaving, arriving;
  bool dir_arrives = false;
  Status carried_error = DescribeCarried(t, r, &leaving, &arriving, &dir_arrives);
  if (!MayProceedUncaptured(r.path, carried_error, &v)) return v;
  // A write through one name of a hard-linked file changes its other names.
  DescribeSameInode(t, r, &arriving);
  std::string pending, pending_from;
  if (r.before.blob.kind == BlobRef::Kind::kPending) pending = r.before.blob.pending, pending_from = t.abs;
  if (r.before2.blob.kind == BlobRef::Kind::kPending) pending = r.before2.blob.pending, pending_from = t.abs2;

  PendingOp* op = &calls_.Open(tid);
  // Before the records: no post-image read while the call runs may be
  // appended after them (call_observer.h).
  if (saver_ != nullptr) {
    op->call = CallOf(r, t.inside, t.has2 && t.inside2, dir_arrives, arriving);
    if (!op->call.empty()) saver_->CallBegins(op->call);
  }
  Status s;
  if (existed_at_start_) {
    if (t.inside) s = RecordUnseenCreation(r.path, r.before);
    if (s.ok() && t.has2 && t.inside2) s = RecordUnseenCreation(r.path2, r.before2);
  }
  if (s.ok()) s = AppendCarried(r, &leaving, op);
  if (s.ok()) s = recorder_->Append(&r);
  if (s.ok()) s = AppendCarried(r, &arriving, op);
  if (!s.ok()) {
    // Records appended without an outcome read as "may have happened";
    // the call did not, as far as guard can tell (refused, or unwatched).
    EndCall(*op, /*happened=*/false);
    calls_.Drop(tid);
    // A file adopted for it is resolved at the seal all the same (copied if
    // the file is still there): left alone, nothing would ever remove it.
    if (!pending.empty()) recorder_->NotePending(pending);
    if (config_.on_failure == CaptureFailurePolicy::kBlock && !ran_already_) return Refuse(r.path, s);
    ++not_captured_;
    log_->error("journal append failed (allowed by policy): {}", s.ToString());
    return v;
  }
  if (!pending.empty() && t.pre != nullptr && r.kind == OpKind::kModify) {
    // A shim's pre-image of a change in place is a copy (interpose/linux/
    // capture.c, capture_fd.c): no inode of the tree's is in the store, so
    // nothing is adopted. Taken for a link, the file's own inode would be
    // "detached" at its next change and its lstat made again, later than
    // the shim's: a pre-image recorded with another size than its content.
    op->pending_index = static_cast<uint32_t>(recorder_->NotePending(pending));
  } else if (!pending.empty()) {
    // A shim's pre-image of a removed file of one name is a link of it:
    // the inode its CALL's lstat saw (BlobStore::TakeFromInbox took nothing
    // else but a copy of ours, whose inode the tree never shows), known
    // without a look at pending/.
    const KnownLstat* known = nullptr;
    if (t.pre != nullptr) known = r.before2.blob.kind == BlobRef::Kind::kPending ? &t.Lstat2() : &t.Lstat();
    NoteAdopted(pending, pending_from, op, known);
  }
  if (t.pre != nullptr && t.inside && r.kind == OpKind::kModify) ChainShimPreImage(r.path, r.before);
  if (t.inside) recorder_->NoteFirstState(r.path, r.before);
  if (t.has2 && t.inside2) recorder_->NoteFirstState(r.path2, r.before2);
  op->seq = r.seq;
  op->holdable = m.holdable;
  op->abs_path = t.abs;
  op->abs_path2 = t.abs2;
  op->rel_path = t.inside ? r.path : std::string();
  op->rel_path2 = t.has2 && t.inside2 ? r.path2 : std::string();
  op->pending_blob = pending;
  op->names_a_file = (r.kind == OpKind::kLink || r.kind == OpKind::kRename) && t.has2 && t.inside2;
  op->moves_directory = MovesDirectoryWithinRoot(r) || dir_arrives;
  op->moves_names_below = moves_names_below;
  // One stop when the tree will tell what the call did (learned_outcome.h).
  op->one_stop = op->carried.empty() && !op->moves_directory &&
                 LearnableFromTree(r, m.req.action, t.inside, t.has2 && t.inside2);
  if (op->one_stop) {
    op->learn = OneStopCall{r.kind, r.before.mode, r.new_mode};
    op->quiet_at = calls_.calls_seen();
    // A call in flight on the same paths, or one that may move names: the
    // tree will not tell (Quiet), so the call keeps its exit stop. Left
    // unknown, its outcome would be guessed at from later records, which
    // the call in flight can make wrong (a rename of a name that another
    // process makes again at once looks as if it had never run).
    op->alone = calls_.Alone(tid, t.abs, t.has2 ? &t.abs2 : nullptr);
    op->one_stop = op->alone;
  }
  if (op->one_stop) {
    v.settle_later = true;
  } else {
    v.watch_exit = true;
  }
  return v;
}

void Capture::NoteAdopted(const std::string& pending, const std::string& from, PendingOp* op,
                          const KnownLstat* known) {
  const size_t index = recorder_->NotePending(pending);
  struct stat st;
  if (known != nullptr && known->exists() && S_ISREG(known->st.st_mode) && known->st.st_nlink == 1) {
    st = known->st;
  } else if (lstat((recorder_->store()->dir() + "/pending/" + pending).c_str(), &st) != 0) {
    return;
  }
  adopted_[{st.st_dev, st.st_ino}] = static_cast<uint32_t>(index);
  op->pending_index = static_cast<uint32_t>(index);
  op->pending_dev = st.st_dev;
  op->pending_ino = st.st_ino;
  op->pending_from = from;
}

void Capture::ChainShimPreImage(const std::string& rel, const FileState& before) {
  SavedVersions* versions = recorder_->versions();
  if (versions == nullptr || before.type != FileType::kRegular || before.blob.kind != BlobRef::Kind::kPending ||
      before.size < kAppendMinBase) {
    return;
  }
  BlobStore* store = recorder_->store();
  SavedVersion latest;
  BlobKey key;
  uint64_t size = 0;
  bool appended = false;
  Status s = versions->Latest(rel, &latest)
                 ? store->ResolvePendingAfter(before.blob.pending, latest.key, latest.size, &key, &size, &appended)
                 : store->ResolvePending(before.blob.pending, &key);
  if (!s.ok()) {
    // Left pending: the seal resolves it as any other.
    log_->warn("pre-image of {} not resolved early: {}", rel, s.ToString());
    return;
  }
  FileState stored = before;
  if (size != 0) stored.size = size;  // what was copied, which the shim's lstat may not say
  stored.blob.kind = BlobRef::Kind::kKey;
  stored.blob.key = key;
  stored.blob.pending.clear();
  versions->Note(rel, stored);
}

bool Capture::Stamp(const MutationRequest& req, const Target& t) {
  // A rename of a directory (or an exchange) moves every name below it; a
  // foreign name may be another name of one of guard's (mutation.h).
  const bool file_rename = req.action == Action::kRename && !(req.flags & RENAME_EXCHANGE) &&
                           t.Lstat().exists() && !S_ISDIR(t.Lstat().st.st_mode);
  const bool moves = (req.action == Action::kRename && !file_rename) || t.foreign || (t.has2 && t.foreign2);
  calls_.Stamp(t.abs, t.has2 ? &t.abs2 : nullptr, moves);
  return moves;
}

void Capture::Abandon(pid_t tid) {
  std::optional<PendingOp> taken = calls_.Take(tid);
  if (!taken) return;
  const PendingOp& op = *taken;
  log_->warn("pid {} died inside a recorded call (op {}); its outcome is unknown", tid, op.seq);
  LeaveUnknown(op);
  DetachIfStillInTree(op);
}

void Capture::LeaveUnknown(const PendingOp& op) {
  if (op.late) {
    // Expected to fail, and nothing is recorded yet: a record claiming
    // what its destination held could undo a file it never replaced
    // (capture_late.cc).
    log_->warn("{} of {} expected to fail ended unseen: not recorded", op.late->syscall, op.abs_path);
    return;
  }
  EndCall(op, /*happened=*/true);
  if (!op.rel_path.empty()) recorder_->NoteChanged(op.rel_path);
  if (!op.rel_path2.empty()) recorder_->NoteChanged(op.rel_path2);
  for (const auto& [seq, rel] : op.carried) recorder_->NoteChanged(rel);
  if (op.names_a_file) {  // a name it may have made (Learn checks the tree)
    links_.Learn(op.rel_path2);
    if (!op.rel_path.empty()) links_.Learn(op.rel_path);
  }
  if (op.moves_directory) {
    if (!op.rel_path2.empty()) recorder_->NoteMovedDirectory(op.rel_path2);
    if (!op.rel_path.empty()) recorder_->NoteMovedDirectory(op.rel_path);
  }
}

void Capture::AfterState(const std::string& abs, uint64_t seq, FileState* out) {
  Status s = CaptureFileState(abs, recorder_->store(), ContentCapture::kNone, out);
  if (s.ok()) return;
  // Half-read metadata (a symlink whose target could not be read) is no
  // state to restore: say "unknown", never guess.
  out->type = FileType::kUnknown;
  log_->warn("cannot examine {} after op {}: {}", abs, seq, s.ToString());
}

void Capture::DetachIfStillInTree(const PendingOp& op) {
  if (op.pending_blob.empty() || op.pending_ino == 0) return;
  struct stat st;
  if (lstat(op.pending_from.c_str(), &st) != 0 || st.st_dev != op.pending_dev || st.st_ino != op.pending_ino) {
    return;  // the call took it away (or it was detached already)
  }
  bool was = false;
  Status s = DetachIfAdopted(st.st_dev, st.st_ino, &was);
  if (!s.ok()) log_->error("cannot copy pending blob {} out of the live file {}: {}", op.pending_blob, op.pending_from,
                           s.ToString());
}

void Capture::After(pid_t tid, long result) {
  std::optional<PendingOp> taken = calls_.Take(tid);
  if (!taken) return;
  PendingOp& op = *taken;
  const int32_t result_errno = result < 0 && result >= -4095 ? static_cast<int32_t>(-result) : 0;
  if (op.late && !RecordLate(&op, result_errno, nullptr)) return;
  Complete(op, tid, result_errno, nullptr);
}

void Capture::Ran(pid_t tid, int32_t result_errno, const FileState& after) {
  std::optional<PendingOp> taken = calls_.Take(tid);
  if (!taken) return;
  PendingOp& op = *taken;
  if (op.late && !RecordLate(&op, result_errno, result_errno == 0 ? &after : nullptr)) return;
  Complete(op, tid, result_errno, result_errno == 0 ? &after : nullptr);
}

void Capture::ReturnedBefore(pid_t tid, const std::string& path, const KnownLstat& seen) {
  const PendingOp* pending = calls_.Find(tid);
  if (pending == nullptr) return;
  if (!pending->one_stop || !pending->abs_path2.empty() || pending->abs_path != path || !seen.made) {
    return Returned(tid);
  }
  const PendingOp op = std::move(*calls_.Take(tid));
  if (calls_.Quiet(op) && LearnFromTree(op.learn, seen.exists() ? &seen.st : nullptr, nullptr) == Learned::kHappened) {
    FileState after;
    if (SavedFileState(seen, std::string(), std::string(), ContentCapture::kNone, &after).ok()) {
      return Complete(op, tid, 0, &after);
    }
  }
  LeaveUnknown(op);
  DetachIfStillInTree(op);
}

void Capture::Returned(pid_t tid) {
  std::optional<PendingOp> taken = calls_.Take(tid);
  if (!taken) return;
  const PendingOp& op = *taken;
  // Quiet: no other call could have changed these paths since this one
  // was recorded (learned_outcome.h).
  if (op.one_stop && calls_.Quiet(op)) {
    // One lstat per path; the state the outcome records comes with it.
    const bool to_second = !op.abs_path2.empty();
    FileState after;
    struct stat st_after {}, st_other {};
    Status s = CaptureFileState(to_second ? op.abs_path2 : op.abs_path, recorder_->store(), ContentCapture::kNone,
                                &after, &st_after);
    const struct stat* now = st_after.st_mode != 0 ? &st_after : nullptr;
    const struct stat* now2 = nullptr;
    if (to_second) {
      now2 = now;
      now = lstat(op.abs_path.c_str(), &st_other) == 0 ? &st_other : nullptr;
    }
    if (s.ok() && LearnFromTree(op.learn, now, now2) == Learned::kHappened) return Complete(op, tid, 0, &after);
  }
  // It failed, did nothing visible, or others ran meanwhile: no outcome.
  LeaveUnknown(op);
  DetachIfStillInTree(op);
}

void Capture::Complete(const PendingOp& op, pid_t tid, int32_t result_errno, const FileState* after) {
  Record r;
  r.kind = OpKind::kOutcome;
  r.pid = tid;
  r.ref_seq = op.seq;
  r.result_errno = result_errno;
  bool happened = r.result_errno == 0;
  // `after` describes the path the call left something at: the destination
  // of a rename or link, else the path itself.
  bool to_second = !op.abs_path2.empty();
  const std::string& rel = to_second ? op.rel_path2 : op.rel_path;
  if (happened && !rel.empty() && after != nullptr) {
    r.after = *after;
  } else if (happened && !rel.empty()) {
    AfterState(to_second ? op.abs_path2 : op.abs_path, op.seq, &r.after);
  } else if (happened) {
    // Outside the root guard does not look (journal_record.h: kUnknown
    // there); the default, kAbsent, would claim an existing file is gone.
    r.after.type = FileType::kUnknown;
  }
  Status s = recorder_->Append(&r);
  if (!s.ok()) log_->error("cannot record the outcome of op {}: {}", op.seq, s.ToString());
  EndCall(op, happened);
  // The entries carried across the root boundary share the call's fate.
  for (const auto& [seq, rel] : op.carried) {
    Record c;
    c.kind = OpKind::kOutcome;
    c.pid = tid;
    c.ref_seq = seq;
    c.result_errno = r.result_errno;
    if (happened) AfterState(config_.root + "/" + rel, seq, &c.after);
    s = recorder_->Append(&c);
    if (!s.ok()) log_->error("cannot record the outcome of op {}: {}", seq, s.ToString());
    if (happened) recorder_->NoteChanged(rel);
  }
  if (happened) {
    if (!op.rel_path.empty()) recorder_->NoteChanged(op.rel_path);
    if (!op.rel_path2.empty()) recorder_->NoteChanged(op.rel_path2);
    if (op.names_a_file) {
      links_.Learn(op.rel_path2);
      if (!op.rel_path.empty()) links_.Learn(op.rel_path);
    }
    // What lies below a moved directory was never named by an operation:
    // the session's end must record it, or a replay could not rebuild it.
    if (op.moves_directory && !op.rel_path2.empty()) recorder_->NoteMovedDirectory(op.rel_path2);
    if (op.moves_directory && !op.rel_path.empty()) recorder_->NoteMovedDirectory(op.rel_path);
  } else if (!op.pending_blob.empty() &&
             !(r.result_errno >= kRestartErrnoMin && r.result_errno <= kRestartErrnoMax)) {
    // The call failed, so the file adopted by hard link is still in the tree
    // and may change: the store must not keep sharing its inode.
    std::string link = recorder_->store()->dir() + "/pending/" + op.pending_blob;
    unlink(link.c_str());
    // Its inode's entry, unless another adoption of the inode replaced it
    // (this one detached meanwhile); before DropPending frees the index.
    if (auto a = adopted_.find({op.pending_dev, op.pending_ino});
        op.pending_ino != 0 && a != adopted_.end() && a->second == op.pending_index) {
      adopted_.erase(a);
    }
    recorder_->DropPending(op.pending_blob);
  }
}

}  // namespace guard
