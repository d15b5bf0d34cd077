#include "supervisor/restore/safe_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <set>

#include "common/blob_key.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "supervisor/base/stat_state.h"
#include "supervisor/base/tree_walk.h"
#include "common/staged_name.h"
#include "supervisor/restore/restore_kill_point.h"

namespace guard {
namespace {

// The directory holding `rel`, "" for the root ("a" is in the root).
std::string Parent(const std::string& rel) { return std::filesystem::path(rel).parent_path().string(); }

using Action = MutationRequest::Action;

MutationRequest Request(Action action, const char* syscall, uint32_t mode = 0, uint64_t flags = 0) {
  MutationRequest req;
  req.action = action;
  req.syscall = syscall;
  req.mode = mode;
  req.flags = flags;
  return req;
}

// Directory `rel` beneath `root_fd` in one call, never through a symlink
// (the restore runs untraced, so openat2 costs no stop); -1 with errno, and
// ENOSYS where the kernel has no openat2.
int OpenBeneath(int root_fd, const std::string& rel) {
  for (;;) {
    long fd = os::OpenAt2(root_fd, rel.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                          os::kResolveBeneath | os::kResolveNoSymlinks | os::kResolveNoMagiclinks);
    if (fd >= 0 || errno != EINTR) return static_cast<int>(fd);
  }
}

}  // namespace

Status SafeTree::Open(const std::string& root, SafeTree* out) {
  out->root_ = root;
  out->absent_ = false;
  out->pid_ = getpid();
  GUARD_RETURN_IF_ERROR(OpenFile(root, O_RDONLY | O_DIRECTORY, 0, &out->root_fd_));
  return Status::Ok();
}

void SafeTree::OpenAbsent(const std::string& root, SafeTree* out) {
  out->root_ = root;
  out->root_fd_.reset();
  out->absent_ = true;
  out->pid_ = getpid();
}

Status SafeTree::MakeRoot(uint32_t mode) {
  MutationRequest req = Request(Action::kMkdir, "mkdir", mode & 07777);
  GUARD_RETURN_IF_ERROR(Announce(req, "."));
  int rc = mkdir(root_.c_str(), mode & 07777);
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_, err);
  absent_ = false;
  return OpenFile(root_, O_RDONLY | O_DIRECTORY, 0, &root_fd_);
}

mode_t SafeTree::Umask() const {
  if (umask_ < 0) {
    umask_ = static_cast<int>(umask(0));
    umask(static_cast<mode_t>(umask_));
  }
  return static_cast<mode_t>(umask_);
}

void SafeTree::SetSink(MutationSink* sink) {
  sink_ = sink;
  tid_ = os::ThreadId();
}

KnownLstat SafeTree::LstatAt(int dir, const std::string& name) {
  KnownLstat k;
  k.made = true;
  if (fstatat(dir, name.c_str(), &k.st, AT_SYMLINK_NOFOLLOW) != 0) k.err = errno;
  return k;
}

Status SafeTree::DevOf(int dir, dev_t* dev) const {
  if (dir == cached_fd_.get() && cached_dev_ != 0) {
    *dev = cached_dev_;
    return Status::Ok();
  }
  struct stat st;
  if (fstat(dir, &st) != 0) return Status::FromErrno(root_, errno);
  if (dir == cached_fd_.get()) cached_dev_ = st.st_dev;
  *dev = st.st_dev;
  return Status::Ok();
}

void SafeTree::Refresh() const {
  cached_fd_.reset();
  cached_parent_.clear();
  cached_dev_ = 0;
  missing_parent_.clear();
}

Status SafeTree::Announce(MutationRequest req, const std::string& rel, const std::string& rel2,
                          const KnownLstat& known, const KnownLstat& known2) {
  // Any change may make a parent that was absent (or replace one).
  missing_parent_.clear();
  if (sink_ == nullptr) return Status::Ok();
  Mutation m;
  m.tid = tid_;
  m.abs = PathJoin(root_, rel);
  req.path = m.abs;
  m.abs_lstat = known;
  if (!rel2.empty()) {
    m.abs2 = PathJoin(root_, rel2);
    m.has2 = true;
    req.path2 = m.abs2;
    m.abs2_lstat = known2;
  }
  m.req = std::move(req);
  Verdict v = sink_->Before(m);
  if (v.deny_errno != 0) {
    return Status::FromErrno(m.abs + ": not changed, its pre-image could not be saved", v.deny_errno);
  }
  RestoreKillPointBefore();
  return Status::Ok();
}

void SafeTree::Finish(int rc) {
  if (sink_ == nullptr) return;
  long result = rc < 0 ? -static_cast<long>(errno) : rc;
  RestoreKillPointAfter();
  sink_->After(tid_, result);
}

Status SafeTree::OpenParent(const std::string& rel, int* dir, std::string* name) const {
  if (!IsPlainRelative(rel) || rel == ".") {
    return Status::InvalidArgument("refusing a path that is not plainly beneath the root: " + rel);
  }
  if (absent_) return Status::FromErrno(root_, ENOENT);
  std::string parent = Parent(rel);
  *name = rel.substr(parent.empty() ? 0 : parent.size() + 1);
  if (parent.empty()) {
    *dir = root_fd_.get();
    return Status::Ok();
  }
  if (cached_fd_.valid() && cached_parent_ == parent) {
    *dir = cached_fd_.get();
    return Status::Ok();
  }
  if (!missing_parent_.empty() && PathIsUnder(parent, missing_parent_)) {
    return Status::FromErrno(root_ + "/" + parent, missing_errno_);
  }
  cached_fd_.reset();
  cached_dev_ = 0;
  int fd = OpenBeneath(root_fd_.get(), parent);
  int err = errno;
  if (fd < 0 && (err == ENOENT || err == ENOTDIR)) {
    missing_parent_ = parent;
    missing_errno_ = err;
  }
  Status s;
  if (fd >= 0) {
    cached_fd_.reset(fd);
  } else if (err == ENOSYS || err == EPERM) {
    s = OpenDirBeneath(root_fd_.get(), parent, O_PATH, &cached_fd_);  // no openat2 here (or refused)
  } else {
    s = Status::FromErrno(parent, err);
  }
  if (s.err() == ELOOP || s.err() == EXDEV) {
    return Status::InvalidArgument("refusing " + rel + ": a parent directory is a symlink or leaves the root");
  }
  if (!s.ok()) return Status::FromErrno(root_ + "/" + parent, s.err());
  cached_parent_ = parent;
  *dir = cached_fd_.get();
  return Status::Ok();
}

void SafeTree::Touched(const std::string& rel) { dirty_dirs_.insert(Parent(rel)); }

Status SafeTree::Stat(const std::string& rel, FileState* out, struct stat* st_out) const {
  *out = FileState();
  struct stat st;
  if (rel == ".") {
    if (absent_) return Status::Ok();
    if (fstat(root_fd_.get(), &st) != 0) return Status::FromErrno(root_, errno);
  } else {
    int dir;
    std::string name;
    Status s = OpenParent(rel, &dir, &name);
    if (s.IsNotFound() || s.err() == ENOTDIR) return Status::Ok();  // parent gone: absent
    GUARD_RETURN_IF_ERROR(s);
    if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return Status::Ok();
      return Status::FromErrno(root_ + "/" + rel, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      GUARD_RETURN_IF_ERROR(ReadLinkAt(dir, name, root_ + "/" + rel, &out->symlink_target));
    }
  }
  std::string target = std::move(out->symlink_target);
  *out = FileStateOfStat(st);
  out->symlink_target = std::move(target);
  if (st_out) *st_out = st;
  return Status::Ok();
}

Status SafeTree::List(const std::string& rel, std::vector<std::string>* names) const {
  if (rel != "." && !IsPlainRelative(rel)) {
    return Status::InvalidArgument("refusing a path that is not plainly beneath the root: " + rel);
  }
  if (absent_) return Status::FromErrno(root_, ENOENT);
  UniqueFd dir;
  if (rel == ".") {
    dir.reset(static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)));
    if (!dir.valid()) return Status::FromErrno(root_, errno);
  } else {
    Status s = OpenDirBeneath(root_fd_.get(), rel, O_RDONLY, &dir);
    if (!s.ok()) return Status::FromErrno(root_ + "/" + rel, s.err());
  }
  return ReadDirNames(dir.get(), root_ + "/" + rel, names);
}

Status SafeTree::HashFile(const std::string& rel, BlobKey* key) const {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, &fd));
  return BlobKey::OfFd(fd.get(), rel, key);  // stops at the first short read
}

Status SafeTree::StageFile(const std::string& rel, const BlobStore& store, const BlobRef& blob, uint32_t mode,
                           Staged* out) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  // A random_device per name cost 3% of an undo's samples (perf record -g
  // of the undo of 8,200 files): one seeds a generator for the tree's life.
  if (!names_seeded_) {
    names_.seed(std::random_device()());
    names_seeded_ = true;
  }
  std::string tmp = StagedName(pid_, static_cast<uint32_t>(names_()));
  GUARD_RETURN_IF_ERROR(WriteNew(dir, tmp, rel, store, blob, mode, out));
  out->tmp = std::move(tmp);
  return Status::Ok();
}

Status SafeTree::WriteNewFile(const std::string& rel, const BlobStore& store, const BlobRef& blob, uint32_t mode) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  Staged file;
  GUARD_RETURN_IF_ERROR(WriteNew(dir, name, rel, store, blob, mode, &file));
  Touched(rel);
  written_[rel] = file.written;
  return Status::Ok();
}

Status SafeTree::WriteNew(int dir, const std::string& name, const std::string& rel, const BlobStore& store,
                          const BlobRef& blob, uint32_t mode, Staged* out) {
  std::string parent = Parent(rel);
  std::string name_rel = parent.empty() ? name : parent + "/" + name;
  // Created with its mode where the umask lets it be (one call fewer to
  // record); else set afterwards.
  mode_t mask = Umask();
  mode_t want = mode & 07777;
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
  // Absent, without a look: O_EXCL makes the call fail if the name is
  // taken, and its outcome then says so; if it succeeds, the name was free
  // (one newfstatat fewer a file restored).
  KnownLstat free_name;
  free_name.made = true;
  free_name.err = ENOENT;
  GUARD_RETURN_IF_ERROR(Announce(Request(Action::kOpen, "openat", want & 0777, flags), name_rel, "", free_name));
  int raw = static_cast<int>(GUARD_EINTR_RETRY(openat(dir, name.c_str(), flags | O_CLOEXEC, want & 0777)));
  int open_errno = errno;
  Finish(raw);
  if (raw < 0) return Status::FromErrno(root_ + "/" + name_rel, open_errno);
  UniqueFd fd(raw);
  // Removes the file after a failure (told to the sink like any change).
  auto drop = [&] {
    fd.reset();
    if (Announce(Request(Action::kUnlink, "unlinkat"), name_rel).ok()) Finish(unlinkat(dir, name.c_str(), 0));
  };
  uint64_t size = 0;
  Status s = store.ReadToNewFile(blob, fd.get(), &size);
  bool exact = (want & 07000) == 0 && (want & mask) == 0;
  if (s.ok() && !exact) {
    MutationRequest req = Request(Action::kFchmod, "fchmod", want);
    req.fd = fd.get();
    s = Announce(req, name_rel);
    if (s.ok()) {
      int rc = fchmod(fd.get(), want);
      if (rc != 0) s = Status::FromErrno(rel, errno);
      Finish(rc);
    }
  }
  struct stat file_st;
  dev_t dir_dev = 0;
  if (s.ok() && fstat(fd.get(), &file_st) != 0) s = Status::FromErrno(root_ + "/" + rel, errno);
  if (s.ok()) s = DevOf(dir, &dir_dev);
  if (!s.ok()) {
    drop();
    return s;
  }
  out->rel = rel;
  out->dev = dir_dev;
  out->written = FileStateOfStat(file_st);
  out->written.dev = static_cast<uint64_t>(file_st.st_dev);
  out->written.ino = static_cast<uint64_t>(file_st.st_ino);
  out->written.blob = blob;
  return Status::Ok();
}

Status SafeTree::SyncStaged(const std::vector<Staged>& staged) {
  if (before_sync_) GUARD_RETURN_IF_ERROR(before_sync_());
  // One syncfs per filesystem, not one fsync per file: a restore writes
  // many small files, and a mount below the root (a bind mount, a volume)
  // is a filesystem of its own.
  std::set<dev_t> synced;
  for (const Staged& file : staged) {
    if (!synced.insert(file.dev).second) continue;
    int dir;
    std::string name;
    GUARD_RETURN_IF_ERROR(OpenParent(file.rel, &dir, &name));
    UniqueFd readable;  // syncfs wants a real fd, not the O_PATH one
    GUARD_RETURN_IF_ERROR(OpenFileAt(dir, ".", O_RDONLY | O_DIRECTORY, 0, &readable));
    if (os::SyncFileSystem(readable.get()) != 0) return Status::FromErrno(root_ + "/" + file.rel + ": syncfs", errno);
  }
  return Status::Ok();
}

Status SafeTree::CommitStaged(const Staged& staged) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(staged.rel, &dir, &name));
  std::string parent = Parent(staged.rel);
  std::string tmp_rel = parent.empty() ? staged.tmp : parent + "/" + staged.tmp;
  Status s = Announce(Request(Action::kRename, "renameat"), tmp_rel, staged.rel, LstatAt(dir, staged.tmp),
                      LstatAt(dir, name));
  if (!s.ok()) {
    DropStaged(staged);
    return s;
  }
  int rc = renameat(dir, staged.tmp.c_str(), dir, name.c_str());
  int err = errno;
  Finish(rc);
  if (rc != 0) {
    DropStaged(staged);
    return Status::FromErrno(root_ + "/" + staged.rel, err);
  }
  Touched(staged.rel);
  written_[staged.rel] = staged.written;
  return Status::Ok();
}

void SafeTree::DropStaged(const Staged& staged) {
  int dir;
  std::string name;
  if (!OpenParent(staged.rel, &dir, &name).ok()) return;
  std::string parent = Parent(staged.rel);
  std::string tmp_rel = parent.empty() ? staged.tmp : parent + "/" + staged.tmp;
  struct stat st;
  if (fstatat(dir, staged.tmp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;  // not there (renamed)
  if (!Announce(Request(Action::kUnlink, "unlinkat"), tmp_rel).ok()) return;
  Finish(unlinkat(dir, staged.tmp.c_str(), 0));
}

Status SafeTree::MakeDir(const std::string& rel, uint32_t mode) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  // Made with its mode where the umask lets it be (no chmod to record);
  // else owner-only, and its mode set afterwards. A set-gid parent passes
  // its set-gid bit on to a directory made in it: the chmod clears it.
  mode_t mask = Umask();
  struct stat parent_st;
  bool exact = (mode & 07000) == 0 && (mode & mask) == 0 && fstat(dir, &parent_st) == 0 &&
               (parent_st.st_mode & S_ISGID) == 0;
  mode_t made = exact ? mode : 0700;
  GUARD_RETURN_IF_ERROR(Announce(Request(Action::kMkdir, "mkdirat", made), rel, "", LstatAt(dir, name)));
  int rc = mkdirat(dir, name.c_str(), made);
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_ + "/" + rel, err);
  Touched(rel);
  return exact ? Status::Ok() : Chmod(rel, mode);
}

Status SafeTree::MakeSymlink(const std::string& rel, const std::string& target) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  MutationRequest req = Request(Action::kSymlink, "symlinkat");
  req.target = target;
  GUARD_RETURN_IF_ERROR(Announce(req, rel, "", LstatAt(dir, name)));
  int rc = symlinkat(target.c_str(), dir, name.c_str());
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_ + "/" + rel, err);
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::MakeFifo(const std::string& rel, uint32_t mode) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  GUARD_RETURN_IF_ERROR(Announce(Request(Action::kMknod, "mknodat", S_IFIFO | (mode & 07777)), rel, "", LstatAt(dir, name)));
  int rc = os::MakeFifoAt(dir, name.c_str(), mode);
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_ + "/" + rel, err);
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::Remove(const std::string& rel) {
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(root_ + "/" + rel, errno);
  }
  bool is_dir = S_ISDIR(st.st_mode);
  int flags = is_dir ? AT_REMOVEDIR : 0;
  KnownLstat known;
  known.made = true;
  known.st = st;
  GUARD_RETURN_IF_ERROR(Announce(Request(is_dir ? Action::kRmdir : Action::kUnlink, "unlinkat", 0,
                                         static_cast<uint64_t>(flags)),
                                 rel, "", known));
  int rc = unlinkat(dir, name.c_str(), flags);
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_ + "/" + rel, err);
  // A directory of that name made later is another one: open it afresh.
  if (is_dir) {
    cached_fd_.reset();
    cached_parent_.clear();
  }
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::Chmod(const std::string& rel, uint32_t mode) {
  if (rel == ".") {
    GUARD_RETURN_IF_ERROR(Announce(Request(Action::kFchmod, "fchmod", mode), "."));
    int rc = fchmod(root_fd_.get(), mode);
    int err = errno;
    Finish(rc);
    if (rc != 0) return Status::FromErrno(root_, err);
    return Status::Ok();
  }
  int dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::FromErrno(root_ + "/" + rel, errno);
  }
  if (S_ISLNK(st.st_mode)) return Status::Ok();  // a symlink has no mode to set
  KnownLstat known;
  known.made = true;
  known.st = st;
  GUARD_RETURN_IF_ERROR(Announce(Request(Action::kChmod, "fchmodat", mode), rel, "", known));
  int rc = fchmodat(dir, name.c_str(), mode, 0);
  int err = errno;
  Finish(rc);
  if (rc != 0) return Status::FromErrno(root_ + "/" + rel, err);
  return Status::Ok();
}

Status SafeTree::SyncDirs() {
  if (before_sync_ && !dirty_dirs_.empty()) GUARD_RETURN_IF_ERROR(before_sync_());
  // One syncfs per filesystem rather than an fsync per directory: an undo
  // of an `rm -rf` changes hundreds of directories, and each fsync waits
  // for a journal commit of its own. (A directory on another filesystem,
  // a mount below the root, is synced with its own.)
  Status first;
  std::set<dev_t> synced;
  for (const std::string& rel : dirty_dirs_) {
    UniqueFd owned;
    if (rel.empty()) {
      owned.reset(static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)));
    } else if (!OpenDirBeneath(root_fd_.get(), rel, O_RDONLY, &owned).ok()) {
      continue;  // removed since: nothing left to sync there
    }
    if (!owned.valid()) continue;
    struct stat st;
    if (fstat(owned.get(), &st) == 0 && !synced.insert(st.st_dev).second) continue;
    Status s;
    if (os::SyncFileSystem(owned.get()) != 0) s = Status::FromErrno(root_ + "/" + rel + ": syncfs", errno);
    if (!s.ok() && first.ok()) first = s;
  }
  dirty_dirs_.clear();
  return first;
}

}  // namespace guard
