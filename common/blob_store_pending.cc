// Pending blobs: files captured by hard link, O(1), before a delete or a
// rename over them, and given their content key afterwards (at the seal). The protocol and
// its crash cases are in docs/format.md (Part II, "Pending blobs").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/blob_codec.h"
#include "common/blob_store.h"
#include "common/blob_store_layout.h"
#include "common/file_io.h"

namespace guard {

using namespace store_layout;

Status store_layout::ReadResolvedMarker(int dirfd, const std::string& name, BlobKey* key) {
  std::string path = ResolvedPath(name);
  char target[64];
  ssize_t n = ::readlinkat(dirfd, path.c_str(), target, sizeof target);
  if (n < 0) return Status::FromErrno(path, errno);
  if (!BlobKey::FromHex(std::string_view(target, static_cast<size_t>(n)), key)) {
    return Status::Corruption(path + ": marker does not hold a blob key");
  }
  return Status::Ok();
}

Status BlobStore::AdoptByLink(int dirfd, const std::string& name, std::string* pending_name) {
  if (int err = injected_errno_.load()) {
    return Status::FromErrno("blob store: adopt (injected failure)", err);
  }
  std::string pending;
  for (int attempt = 0;; ++attempt) {
    pending = UniqueName(pending_owner_);
    std::string target = PendingPath(pending);
    // Flags 0: a final symlink is linked itself, never followed.
    if (GUARD_EINTR_RETRY(::linkat(dirfd, name.c_str(), dirfd_.get(), target.c_str(), 0)) == 0)
      break;
    int err = errno;
    if (err == EEXIST && attempt < 3) continue;  // a clash in pending/, not the source
    return Status::FromErrno("link " + name + " into the blob store", err);
  }
  std::string path = PendingPath(pending);
  struct stat st;
  if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode)) {
    ::unlinkat(dirfd_.get(), path.c_str(), 0);
    return Status::InvalidArgument(name + " is not a regular file: only those are adopted");
  }
  // The user's data may not be on disk yet; SyncWritten makes it so: a
  // syncfs covers the inode, an fsync needs an fd. Opening does not read. If
  // it cannot be opened (mode 0000 and not root), at least the link itself is
  // made durable.
  UniqueFd fd;
  if (sync_mode_ == SyncMode::kFsyncEach) {
    (void)OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW | O_NOCTTY, 0, &fd);
  }
  RememberUnsynced(std::move(fd), "pending");
  *pending_name = pending;
  return Status::Ok();
}

bool BlobStore::PendingNameOf(const std::string& name, const std::string& owner) {
  return !owner.empty() && name.size() > owner.size() + 1 && name.compare(0, owner.size(), owner) == 0 &&
         name[owner.size()] == '-';
}

Status BlobStore::PendingLinkCount(const std::string& pending_name, uint64_t* nlink) const {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  struct stat st;
  std::string path = PendingPath(pending_name);
  if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return StoreErrno(dir_, path);
  *nlink = st.st_nlink;
  return Status::Ok();
}

Status BlobStore::DetachPending(const std::string& pending_name) {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  if (int err = injected_errno_.load()) {
    return Status::FromErrno("blob store: detach (injected failure)", err);
  }
  std::string path = PendingPath(pending_name);
  UniqueFd src;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW, 0, &src));
  std::string tmp = "tmp/" + UniqueName();
  UniqueFd copy;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd_.get(), tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, &copy));
  Status s;
  char buf[1 << 16];
  for (off_t off = 0;;) {
    size_t got = 0;
    s = PreadFull(src.get(), buf, sizeof buf, off, &got, dir_ + "/" + path);
    if (!s.ok() || got == 0) break;
    s = WriteAll(copy.get(), buf, got, dir_ + "/" + tmp);
    if (!s.ok()) break;
    off += static_cast<off_t>(got);
  }
  // The pending name may already be named by a durable record: the copy
  // replaces it only once its bytes are on disk.
  if (s.ok()) s = FsyncFd(copy.get(), dir_ + "/" + tmp);
  if (s.ok() && ::renameat(dirfd_.get(), tmp.c_str(), dirfd_.get(), path.c_str()) != 0) {
    s = StoreErrno(dir_, path);
  }
  if (!s.ok()) {
    ::unlinkat(dirfd_.get(), tmp.c_str(), 0);
    return s;
  }
  RememberUnsynced(std::move(copy), "pending");
  return Status::Ok();
}

Status BlobStore::RemovePending(const std::string& pending_name) {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  std::string path = PendingPath(pending_name);
  if (::unlinkat(dirfd_.get(), path.c_str(), 0) != 0 && errno != ENOENT) return StoreErrno(dir_, path);
  return Status::Ok();
}

// Resolution is two steps with the caller's journal between them
// (docs/format.md (Part II), "Resolution"):
//   1. ResolvePending hashes the pending inode; if the store holds its only
//      name it gets mode 0600 and a fresh mtime and stays where it is, else
//      its content is put as a new object;
//   the caller appends kBlobResolved {name, key} and makes it durable;
//   2. PlaceResolved renames the pending name to its object name, or unlinks
//      it (content copied in step 1, or already stored).
// A crash before the record is durable leaves the pending name, which
// recovery resolves again; one after it leaves a record that maps the name
// to its key, and recovery finishes step 2 (FinishResolved). No marker file
// and no second name are needed: the journal carries the mapping.
Status BlobStore::ResolvePending(const std::string& pending_name, PendingResolution* out) {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  out->name = pending_name;
  out->copied = false;
  std::string path = PendingPath(pending_name);
  UniqueFd fd;
  Status opened = OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW, 0, &fd);
  if (opened.IsNotFound()) {
    // Gone: an earlier guard resolved it and left its marker, or nothing can.
    out->copied = true;  // nothing to place
    Status s = ReadResolvedMarker(dirfd_.get(), pending_name, &out->key);
    if (s.IsNotFound()) return Status::NotFound("pending blob " + pending_name + " is missing");
    return s;
  }
  struct stat st;
  if (!opened.ok()) {
    // A mode without read permission (0000, 0200) and not root: the store's
    // own inode may be given a blob's mode first; someone else's may not.
    if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_nlink != 1) return opened;
    if (::fchmodat(dirfd_.get(), path.c_str(), 0600, 0) != 0) return opened;
    GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW, 0, &fd));
  }
  if (::fstat(fd.get(), &st) != 0) return StoreErrno(dir_, path);
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument(dir_ + "/" + path + " is not a regular file");

  if (st.st_nlink > 1) {
    // The inode is still some file's content outside the store (the
    // operation failed, or the file had other links): taking it as an object
    // would let later writes to that file change a stored blob. Copy instead.
    out->copied = true;
    return PutFd(fd.get(), &out->key, nullptr);
  }
  GUARD_RETURN_IF_ERROR(
      BlobKey::OfFdSized(fd.get(), static_cast<uint64_t>(st.st_size), dir_ + "/" + path, &out->key));
  struct stat after;
  if (::fstat(fd.get(), &after) != 0) return StoreErrno(dir_, path);
  if (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
      after.st_mtim.tv_nsec != st.st_mtim.tv_nsec || after.st_ctim.tv_sec != st.st_ctim.tv_sec ||
      after.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
    // Someone wrote it while it was hashed (an fd guard could not see, from
    // outside the session): the key may not match the bytes, so the inode
    // cannot become the object. A copy gets the key of what it copied.
    out->copied = true;
    return PutFd(fd.get(), &out->key, nullptr);
  }
  // The user's name is gone, so the inode is the store's alone: give it a
  // blob's mode (a setuid bit has no business in the store; the mode to
  // restore is in the journal). Best effort: someone else's file (adopted
  // by root) keeps its mode.
  if ((st.st_mode & 07777) != 0600) (void)::fchmod(fd.get(), 0600);
  // The object it becomes must look fresh to a garbage collection running
  // now (docs/format.md, Part II, "Garbage collection"); the inode keeps the
  // user's old mtime otherwise.
  if (::futimens(fd.get(), nullptr) != 0) return StoreErrno(dir_, path);
  return Status::Ok();
}

Status BlobStore::PlaceResolved(const PendingResolution& r) {
  if (!ValidPendingName(r.name)) return Status::InvalidArgument("invalid pending blob name '" + r.name + "'");
  int dirfd = dirfd_.get();
  std::string path = PendingPath(r.name);
  if (r.copied) {
    if (::unlinkat(dirfd, path.c_str(), 0) != 0 && errno != ENOENT) return StoreErrno(dir_, path);
    RememberUnsynced(UniqueFd(), "pending");
    return Status::Ok();
  }
  std::string subdir = ObjectDir(r.key);
  std::string target = ObjectName(r.key, false);
  for (int attempt = 0; attempt < 8; ++attempt) {
    // RENAME_NOREPLACE: an object already stored under the key (another
    // session's, or a put's) stays, and the pending name is dropped.
    int rc = ::renameat2(dirfd, path.c_str(), dirfd, target.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      // No RENAME_NOREPLACE here: look first, then a plain rename (replacing
      // an object with the same content would be harmless).
      rc = Contains(r.key) ? -1 : ::renameat(dirfd, path.c_str(), dirfd, target.c_str());
      if (rc != 0 && errno != ENOENT) errno = EEXIST;
    }
    if (rc == 0) {
      RememberUnsynced(UniqueFd(), subdir);
      RememberUnsynced(UniqueFd(), "pending");
      return Status::Ok();
    }
    if (errno == ENOENT) {
      struct stat st;
      if (::fstatat(dirfd, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return Status::Ok();  // placed before (a rerun after a crash)
        return StoreErrno(dir_, path);
      }
      bool created = false;
      GUARD_RETURN_IF_ERROR(MakeDirAt(dirfd, subdir, dir_ + "/" + subdir, false, &created));
      if (created) RememberUnsynced(UniqueFd(), "objects");
      continue;
    }
    if (errno != EEXIST) return StoreErrno(dir_, target);
    // Already stored: keep that object fresh for a running gc (rule 1 of
    // "Garbage collection"); if a sweep took it meanwhile, place ours.
    std::string existing = FindObject(dirfd, r.key);
    if (existing.empty() || !Refresh(dirfd, existing)) continue;
    if (::unlinkat(dirfd, path.c_str(), 0) != 0 && errno != ENOENT) return StoreErrno(dir_, path);
    // Its writer may not have synced it yet (another session, one that
    // crashed): the next SyncWritten covers it (an fsync needs an fd).
    UniqueFd existing_fd;
    if (sync_mode_ == SyncMode::kFsyncEach) {
      GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd, existing, O_RDONLY | O_NOFOLLOW, 0, &existing_fd));
    }
    RememberUnsynced(std::move(existing_fd), subdir);
    RememberUnsynced(UniqueFd(), "pending");
    return Status::Ok();
  }
  return Status::IOError(dir_ + ": " + r.key.Hex() + ": object keeps disappearing");
}

Status BlobStore::FinishResolved(const std::string& pending_name, const BlobKey& key) {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  std::string path = PendingPath(pending_name);
  struct stat st;
  if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();  // placed
    return StoreErrno(dir_, path);
  }
  PendingResolution r;
  r.name = pending_name;
  r.key = key;
  if (Contains(key)) {
    // Copied in step 1, or stored by someone else: only the name is left.
    // (Refreshed so that a gc running now keeps it: the record names it.)
    GUARD_RETURN_IF_ERROR(KeepAlive(key));
    r.copied = true;
    return PlaceResolved(r);
  }
  GUARD_RETURN_IF_ERROR(ResolvePending(pending_name, &r));
  if (!(r.key == key)) {
    return Status::Corruption("pending blob " + pending_name + " no longer has the key its record names (" +
                              key.Hex() + ")");
  }
  return PlaceResolved(r);
}

Status BlobStore::ListPending(std::vector<std::string>* names) const {
  names->clear();
  int fd = ::openat(dirfd_.get(), "pending", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return StoreErrno(dir_, "pending");
  UniqueFd pending(fd);
  std::vector<std::string> all;
  GUARD_RETURN_IF_ERROR(ReadDirNames(pending.get(), dir_ + "/pending", &all));
  for (std::string& name : all) {
    struct stat st;
    if (::fstatat(dirfd_.get(), ResolvedPath(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      names->push_back(std::move(name));
    }
  }
  std::sort(names->begin(), names->end());
  return Status::Ok();
}

}  // namespace guard
