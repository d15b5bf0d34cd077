#include "supervisor/restore/safe_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <set>
#include <xxhash.h>

#include "common/file_io.h"
#include "common/staged_name.h"

namespace guard {
namespace {

// Opens directory `rel` (a path IsSafeRelative accepts) below `root_fd` one
// component at a time, never following a symlink: a component that is a
// symlink fails with ELOOP, one that is not a directory with ENOTDIR. Plain
// openat without write flags, unlike openat2 (whose flags the seccomp filter
// cannot read), does not stop a restore, which runs traced, at every path.
// `flags` apply to the last component (O_DIRECTORY | O_NOFOLLOW added).
int OpenBeneath(int root_fd, const std::string& rel, int flags) {
  int cur = root_fd;
  UniqueFd held;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    bool last = slash == std::string::npos;
    std::string name = rel.substr(start, last ? std::string::npos : slash - start);
    int f = (last ? flags : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = static_cast<int>(GUARD_EINTR_RETRY(::openat(cur, name.c_str(), f)));
    if (fd < 0) {
      int err = errno;
      struct stat st;
      if ((err == ENOTDIR || err == ELOOP) && fstatat(cur, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        err = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      }
      errno = err;
      return -1;
    }
    if (last) return fd;
    held.reset(fd);
    cur = fd;
    start = slash + 1;
  }
}

std::string Parent(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? "" : rel.substr(0, slash);
}

FileType TypeOf(mode_t m) {
  if (S_ISREG(m)) return FileType::kRegular;
  if (S_ISDIR(m)) return FileType::kDirectory;
  if (S_ISLNK(m)) return FileType::kSymlink;
  return FileType::kOther;
}

}  // namespace

bool SafeTree::IsSafeRelative(const std::string& rel) {
  if (rel.empty() || rel[0] == '/' || rel.find('\0') != std::string::npos) return false;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    std::string part = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return rel == ".";
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

Status SafeTree::Open(const std::string& root, SafeTree* out) {
  out->root_ = root;
  GUARD_RETURN_IF_ERROR(OpenFile(root, O_RDONLY | O_DIRECTORY, 0, &out->root_fd_));
  return Status::Ok();
}

Status SafeTree::OpenParent(const std::string& rel, UniqueFd* dir, std::string* name) const {
  if (!IsSafeRelative(rel) || rel == ".") {
    return Status::InvalidArgument("refusing a path that is not plainly beneath the root: " + rel);
  }
  std::string parent = Parent(rel);
  *name = rel.substr(parent.empty() ? 0 : parent.size() + 1);
  int fd = parent.empty() ? static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0))
                          : OpenBeneath(root_fd_.get(), parent, O_PATH | O_DIRECTORY);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == EXDEV) {
      return Status::InvalidArgument("refusing " + rel + ": a parent directory is a symlink or leaves the root");
    }
    return Status::FromErrno(root_ + "/" + parent, err);
  }
  dir->reset(fd);
  return Status::Ok();
}

void SafeTree::Touched(const std::string& rel) { dirty_dirs_.insert(Parent(rel)); }

Status SafeTree::Stat(const std::string& rel, FileState* out, struct stat* st_out) const {
  *out = FileState();
  struct stat st;
  if (rel == ".") {
    if (fstat(root_fd_.get(), &st) != 0) return Status::FromErrno(root_, errno);
  } else {
    UniqueFd dir;
    std::string name;
    Status s = OpenParent(rel, &dir, &name);
    if (s.IsNotFound() || s.err() == ENOTDIR) return Status::Ok();  // parent gone: absent
    GUARD_RETURN_IF_ERROR(s);
    if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return Status::Ok();
      return Status::FromErrno(root_ + "/" + rel, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX + 1];
      ssize_t n = readlinkat(dir.get(), name.c_str(), buf, PATH_MAX);
      if (n < 0) return Status::FromErrno(root_ + "/" + rel, errno);
      out->symlink_target.assign(buf, static_cast<size_t>(n));
    }
  }
  out->type = TypeOf(st.st_mode);
  out->mode = st.st_mode & 07777;
  out->size = static_cast<uint64_t>(st.st_size);
  out->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (st_out) *st_out = st;
  return Status::Ok();
}

Status SafeTree::List(const std::string& rel, std::vector<std::string>* names) const {
  if (rel != "." && !IsSafeRelative(rel)) {
    return Status::InvalidArgument("refusing a path that is not plainly beneath the root: " + rel);
  }
  int fd = rel == "." ? static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0))
                      : OpenBeneath(root_fd_.get(), rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0) return Status::FromErrno(root_ + "/" + rel, errno);
  UniqueFd dir(fd);
  return ReadDirNames(dir.get(), root_ + "/" + rel, names);
}

Status SafeTree::HashFile(const std::string& rel, BlobKey* key) const {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dir.get(), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, &fd));
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  std::string buf(1 << 18, '\0');
  off_t off = 0;
  Status s;
  for (;;) {
    size_t got = 0;
    s = PreadFull(fd.get(), buf.data(), buf.size(), off, &got, rel);
    if (!s.ok() || got == 0) break;
    XXH3_128bits_update(state, buf.data(), got);
    off += static_cast<off_t>(got);
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  key->high = h.high64;
  key->low = h.low64;
  return s;
}

Status SafeTree::StageFile(const std::string& rel, const BlobStore& store, const BlobRef& blob, uint32_t mode,
                           Staged* out) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  std::random_device rd;
  std::string tmp = StagedName(getpid(), static_cast<uint32_t>(rd()));
  UniqueFd fd;
  // Created with its mode where the umask lets it be (a restore runs traced,
  // and every fchmod is one more stopped call); else set afterwards.
  mode_t mask = umask(0);
  umask(mask);
  mode_t want = mode & 07777;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dir.get(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, want & 0777, &fd));
  uint64_t size = 0;
  Status s = store.ReadTo(blob, fd.get(), &size);
  bool exact = (want & 07000) == 0 && (want & mask) == 0;
  if (s.ok() && !exact && fchmod(fd.get(), want) != 0) s = Status::FromErrno(rel, errno);
  if (!s.ok()) {
    fd.reset();
    unlinkat(dir.get(), tmp.c_str(), 0);
    return s;
  }
  struct stat st;
  if (fstat(dir.get(), &st) != 0) {
    Status err = Status::FromErrno(root_ + "/" + rel, errno);
    unlinkat(dir.get(), tmp.c_str(), 0);
    return err;
  }
  out->rel = rel;
  out->tmp = std::move(tmp);
  out->dev = st.st_dev;
  return Status::Ok();
}

Status SafeTree::SyncStaged(const std::vector<Staged>& staged) {
  // A mount below the root (a bind mount, a volume) is a filesystem of its own.
  std::set<dev_t> synced;
  for (const Staged& file : staged) {
    if (!synced.insert(file.dev).second) continue;
    UniqueFd dir;
    std::string name;
    GUARD_RETURN_IF_ERROR(OpenParent(file.rel, &dir, &name));
    UniqueFd readable;  // syncfs wants a real fd, not the O_PATH one
    GUARD_RETURN_IF_ERROR(OpenFileAt(dir.get(), ".", O_RDONLY | O_DIRECTORY, 0, &readable));
    if (syncfs(readable.get()) != 0) return Status::FromErrno(root_ + "/" + file.rel + ": syncfs", errno);
  }
  return Status::Ok();
}

Status SafeTree::CommitStaged(const Staged& staged) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(staged.rel, &dir, &name));
  if (renameat(dir.get(), staged.tmp.c_str(), dir.get(), name.c_str()) != 0) {
    Status s = Status::FromErrno(root_ + "/" + staged.rel, errno);
    unlinkat(dir.get(), staged.tmp.c_str(), 0);
    return s;
  }
  Touched(staged.rel);
  return Status::Ok();
}

void SafeTree::DropStaged(const Staged& staged) {
  UniqueFd dir;
  std::string name;
  if (OpenParent(staged.rel, &dir, &name).ok()) unlinkat(dir.get(), staged.tmp.c_str(), 0);
}

Status SafeTree::MakeDir(const std::string& rel, uint32_t mode) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  if (mkdirat(dir.get(), name.c_str(), 0700) != 0) return Status::FromErrno(root_ + "/" + rel, errno);
  Touched(rel);
  return Chmod(rel, mode);
}

Status SafeTree::MakeSymlink(const std::string& rel, const std::string& target) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  if (symlinkat(target.c_str(), dir.get(), name.c_str()) != 0) return Status::FromErrno(root_ + "/" + rel, errno);
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::MakeFifo(const std::string& rel, uint32_t mode) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  if (mkfifoat(dir.get(), name.c_str(), mode) != 0) return Status::FromErrno(root_ + "/" + rel, errno);
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::Remove(const std::string& rel) {
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  struct stat st;
  if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(root_ + "/" + rel, errno);
  }
  int flags = S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0;
  if (unlinkat(dir.get(), name.c_str(), flags) != 0) return Status::FromErrno(root_ + "/" + rel, errno);
  Touched(rel);
  return Status::Ok();
}

Status SafeTree::Rename(const std::string& from, const std::string& to) {
  UniqueFd d1, d2;
  std::string n1, n2;
  GUARD_RETURN_IF_ERROR(OpenParent(from, &d1, &n1));
  GUARD_RETURN_IF_ERROR(OpenParent(to, &d2, &n2));
  if (renameat(d1.get(), n1.c_str(), d2.get(), n2.c_str()) != 0) {
    return Status::FromErrno(root_ + "/" + from + " -> " + to, errno);
  }
  Touched(from);
  Touched(to);
  return Status::Ok();
}

Status SafeTree::Exchange(const std::string& a, const std::string& b) {
  UniqueFd d1, d2;
  std::string n1, n2;
  GUARD_RETURN_IF_ERROR(OpenParent(a, &d1, &n1));
  GUARD_RETURN_IF_ERROR(OpenParent(b, &d2, &n2));
  if (renameat2(d1.get(), n1.c_str(), d2.get(), n2.c_str(), RENAME_EXCHANGE) != 0) {
    return Status::FromErrno(root_ + "/" + a + " <-> " + b, errno);
  }
  Touched(a);
  Touched(b);
  return Status::Ok();
}

Status SafeTree::HardLink(const std::string& existing, const std::string& name_rel) {
  UniqueFd d1, d2;
  std::string n1, n2;
  GUARD_RETURN_IF_ERROR(OpenParent(existing, &d1, &n1));
  GUARD_RETURN_IF_ERROR(OpenParent(name_rel, &d2, &n2));
  if (linkat(d1.get(), n1.c_str(), d2.get(), n2.c_str(), 0) != 0) {
    return Status::FromErrno(root_ + "/" + name_rel, errno);
  }
  Touched(name_rel);
  return Status::Ok();
}

Status SafeTree::Chmod(const std::string& rel, uint32_t mode) {
  if (rel == ".") {
    if (fchmod(root_fd_.get(), mode) != 0) return Status::FromErrno(root_, errno);
    return Status::Ok();
  }
  UniqueFd dir;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(rel, &dir, &name));
  struct stat st;
  if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Status::FromErrno(root_ + "/" + rel, errno);
  }
  if (S_ISLNK(st.st_mode)) return Status::Ok();  // a symlink has no mode to set
  if (fchmodat(dir.get(), name.c_str(), mode, 0) != 0) return Status::FromErrno(root_ + "/" + rel, errno);
  return Status::Ok();
}

Status SafeTree::SyncDirs() {
  Status first;
  for (const std::string& rel : dirty_dirs_) {
    int fd = rel.empty() ? static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0))
                         : OpenBeneath(root_fd_.get(), rel, O_RDONLY | O_DIRECTORY);
    if (fd < 0) continue;  // removed since: nothing left to sync there
    UniqueFd owned(fd);
    Status s = FsyncFd(owned.get(), root_ + "/" + rel);
    if (!s.ok() && first.ok()) first = s;
  }
  dirty_dirs_.clear();
  return first;
}

}  // namespace guard
