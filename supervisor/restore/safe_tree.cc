#include "supervisor/restore/safe_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <set>
#include <xxhash.h>

#include "common/file_io.h"
#include "supervisor/base/stat_state.h"
#include "supervisor/base/tree_walk.h"
#include "common/staged_name.h"

namespace guard {
namespace {

// The directory holding `rel`, "" for the root ("a" is in the root).
std::string Parent(const std::string& rel) { return std::filesystem::path(rel).parent_path().string(); }

}  // namespace

Status SafeTree::Open(const std::string& root, SafeTree* out) {
  out->root_ = root;
  out->absent_ = false;
  GUARD_RETURN_IF_ERROR(OpenFile(root, O_RDONLY | O_DIRECTORY, 0, &out->root_fd_));
  return Status::Ok();
}

void SafeTree::OpenAbsent(const std::string& root, SafeTree* out) {
  out->root_ = root;
  out->root_fd_.reset();
  out->absent_ = true;
}

Status SafeTree::OpenParent(const std::string& rel, UniqueFd* dir, std::string* name) const {
  if (!IsPlainRelative(rel) || rel == ".") {
    return Status::InvalidArgument("refusing a path that is not plainly beneath the root: " + rel);
  }
  if (absent_) return Status::FromErrno(root_, ENOENT);
  std::string parent = Parent(rel);
  *name = rel.substr(parent.empty() ? 0 : parent.size() + 1);
  if (parent.empty()) {
    int fd = static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0));
    if (fd < 0) return Status::FromErrno(root_, errno);
    dir->reset(fd);
    return Status::Ok();
  }
  Status s = OpenDirBeneath(root_fd_.get(), parent, O_PATH, dir);
  if (s.err() == ELOOP || s.err() == EXDEV) {
    return Status::InvalidArgument("refusing " + rel + ": a parent directory is a symlink or leaves the root");
  }
  if (!s.ok()) return Status::FromErrno(root_ + "/" + parent, s.err());
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
      GUARD_RETURN_IF_ERROR(ReadLinkAt(dir.get(), name, root_ + "/" + rel, &out->symlink_target));
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
    UniqueFd owned;
    if (rel.empty()) {
      owned.reset(static_cast<int>(fcntl(root_fd_.get(), F_DUPFD_CLOEXEC, 0)));
    } else if (!OpenDirBeneath(root_fd_.get(), rel, O_RDONLY, &owned).ok()) {
      continue;  // removed since: nothing left to sync there
    }
    if (!owned.valid()) continue;
    Status s = FsyncFd(owned.get(), root_ + "/" + rel);
    if (!s.ok() && first.ok()) first = s;
  }
  dirty_dirs_.clear();
  return first;
}

}  // namespace guard
