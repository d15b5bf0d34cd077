// Pending blobs: files captured by hard link, O(1), before a delete or a
// rename over them, and given their content key afterwards. The protocol and
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
#include "common/inbox_layout.h"
#include "common/os_calls.h"

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

Status BlobStore::AdoptByClone(int fd, std::string* pending_name) {
  if (int err = injected_errno_.load()) {
    return Status::FromErrno("blob store: clone (injected failure)", err);
  }
  std::string pending;
  for (int attempt = 0;; ++attempt) {
    pending = UniqueName(pending_owner_);
    if (os::CloneFileAt(fd, dirfd_.get(), PendingPath(pending).c_str()) == 0) break;
    int err = errno;
    if (err == EEXIST && attempt < 3) continue;  // a clash in pending/
    return Status::FromErrno("clone into the blob store", err);
  }
  // The clone's blocks are the source's, already wherever the source's
  // are; SyncWritten makes the new inode and its name durable (syncfs).
  RememberUnsynced(UniqueFd(), "pending");
  *pending_name = pending;
  return Status::Ok();
}

namespace {

// Whose the inbox's own copies are (TakeFromInbox): asked once, not per
// pre-image; guard does not change its ids.
uid_t Euid() {
  static const uid_t euid = ::geteuid();
  return euid;
}

}  // namespace

Status BlobStore::TakeFromInbox(int inbox_fd, const std::string& name, const InboxVictim& victim) {
  if (!ValidPendingName(name)) return Status::InvalidArgument("invalid inbox name '" + name + "'");
  if (int err = injected_errno_.load()) return Status::FromErrno("blob store: inbox (injected failure)", err);
  const std::string in_inbox = InboxPath(name);
  std::string path = PendingPath(name);
  // Moved first, looked at after: the inbox is writable by the session,
  // the store is not, so what the lstat of pending/<name> shows is what was
  // taken, and nothing can swap it between the look and the move (two
  // calls a pre-image; a look before the move would need a second one
  // after it). What is not the pre-image goes back where it was. The inbox
  // is on the store's filesystem (StateDir::inbox_root), so this is a
  // rename, never a copy.
  if (GUARD_EINTR_RETRY(os::RenameNoReplace(inbox_fd, in_inbox.c_str(), dirfd_.get(), path.c_str())) != 0) {
    int err = errno;
    // Taken already: the ring hands a record over again when the consumer
    // that applied it died before its position was durable (recovery), and
    // its pre-image is then in pending/ (or already resolved).
    struct stat taken;
    if (err == ENOENT && (::fstatat(dirfd_.get(), path.c_str(), &taken, AT_SYMLINK_NOFOLLOW) == 0 ||
                          ::fstatat(dirfd_.get(), ResolvedPath(name).c_str(), &taken, AT_SYMLINK_NOFOLLOW) == 0)) {
      return Status::Ok();
    }
    if (err == ENOENT || err == ENOTDIR) return Status::FromErrno("inbox " + name, err);
    return StoreErrno(dir_, path);
  }
  struct stat st;
  if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return StoreErrno(dir_, path);
  const bool linked = victim.known && st.st_dev == victim.dev && st.st_ino == victim.ino;
  const bool own_copy = st.st_uid == Euid() && st.st_nlink == 1;
  const bool orphan_linked = !linked && st.st_uid == Euid() && st.st_nlink > 1 &&
                             static_cast<uint64_t>(st.st_size) <= victim.orphan_max_bytes;
  if (!S_ISREG(st.st_mode) || !(linked || own_copy || orphan_linked)) {
    // Should the inbox have a new entry by that name meanwhile, it stays
    // in pending/, named by no record: kept and listed, never deleted
    // (orphan_pending.h).
    (void)GUARD_EINTR_RETRY(os::RenameNoReplace(dirfd_.get(), path.c_str(), inbox_fd, in_inbox.c_str()));
    return Status::InvalidArgument("inbox " + name + " is not the pre-image its record names");
  }
  UniqueFd fd;
  if (sync_mode_ == SyncMode::kFsyncEach) {
    (void)OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW | O_NOCTTY, 0, &fd);
  }
  RememberUnsynced(std::move(fd), "pending");
  // Its other name may still change it: the store keeps a copy of its own.
  if (orphan_linked) return DetachPending(name);
  return Status::Ok();
}

std::string BlobStore::InboxPath(const std::string& name) {
  std::string path(1, guard_inbox_shard_char(guard_inbox_shard(name.data(), name.size())));
  path += '/';
  path += name;
  return path;
}

bool BlobStore::PendingNameOf(const std::string& name, const std::string& owner) {
  return !owner.empty() && name.size() > owner.size() + 1 && name.compare(0, owner.size(), owner) == 0 &&
         name[owner.size()] == '-';
}

Status BlobStore::PendingLinkCount(const std::string& pending_name, uint64_t* nlink) const {
  struct stat st;
  GUARD_RETURN_IF_ERROR(StatPending(pending_name, &st));
  *nlink = st.st_nlink;
  return Status::Ok();
}

Status BlobStore::StatPending(const std::string& pending_name, struct stat* st) const {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  std::string path = PendingPath(pending_name);
  if (::fstatat(dirfd_.get(), path.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) return StoreErrno(dir_, path);
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

// Order of the steps, each safe to crash after (a rerun redoes the rest):
//   1. the content gets its object name: a hard link to the pending inode
//      (or a copy, or nothing when the key is already stored);
//   2. resolved/<name> records the key (a symlink, created atomically);
//   3. pending/<name> is unlinked, by the SyncWritten that has made 1 and 2
//      durable.
// Until step 3 the pending name and the object share one inode.
Status BlobStore::ResolvePending(const std::string& pending_name, BlobKey* key) {
  if (!ValidPendingName(pending_name)) {
    return Status::InvalidArgument("invalid pending blob name '" + pending_name + "'");
  }
  std::string path = PendingPath(pending_name);
  struct stat st;
  if (::fstatat(dirfd_.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return StoreErrno(dir_, path);
    // Resolved before (step 3 done): the marker has the key.
    Status s = ReadResolvedMarker(dirfd_.get(), pending_name, key);
    if (s.IsNotFound()) return Status::NotFound("pending blob " + pending_name + " is missing");
    return s;
  }
  if (st.st_nlink == 1 && (st.st_mode & 07777) != 0600) {
    // The user's name is gone, so the inode is the store's alone: give it a
    // blob's mode. A file of mode 0000 or 0200 could not be read back
    // otherwise, and a setuid bit has no business in the store. The mode to
    // restore is in the journal, not here. Best effort: someone else's file
    // (adopted by root) keeps its mode.
    (void)::fchmodat(dirfd_.get(), path.c_str(), 0600, 0);
  }
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd_.get(), path, O_RDONLY | O_NOFOLLOW, 0, &fd));
  if (::fstat(fd.get(), &st) != 0) return StoreErrno(dir_, path);
  if (!S_ISREG(st.st_mode))
    return Status::InvalidArgument(dir_ + "/" + path + " is not a regular file");

  BlobKey k;
  // nlink is 2 after a crash between steps 1 and 3 (object + pending name),
  // which the marker tells apart from a live outside name.
  BlobKey recorded;
  bool relinked = st.st_nlink == 2 &&
                  ReadResolvedMarker(dirfd_.get(), pending_name, &recorded).ok() &&
                  Contains(recorded);
  if (st.st_nlink > 1 && !relinked) {
    // The inode is still some file's content outside the store (the
    // operation failed, or the file had other links): taking it as an object
    // would let later writes to that file change a stored blob. Copy instead.
    GUARD_RETURN_IF_ERROR(PutFd(fd.get(), &k, nullptr));
  } else {
    auto discard = [](const char*, size_t) { return Status::Ok(); };
    GUARD_RETURN_IF_ERROR(DecodeBlob(fd.get(), false, discard, &k, nullptr));
    struct stat after;
    if (::fstat(fd.get(), &after) != 0) return StoreErrno(dir_, path);
    if (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
        after.st_mtim.tv_nsec != st.st_mtim.tv_nsec || after.st_ctim.tv_sec != st.st_ctim.tv_sec ||
        after.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
      // Someone wrote it while it was hashed (an fd guard could not see, from
      // outside the session): the key may not match the bytes, so the inode
      // cannot become the object. A copy gets the key of what it copied.
      GUARD_RETURN_IF_ERROR(PutFd(fd.get(), &k, nullptr));
    } else {
      GUARD_RETURN_IF_ERROR(PlaceTemp(path, std::move(fd), k, ObjectKind::kRaw, /*keep_source=*/true));
    }
  }

  GUARD_RETURN_IF_ERROR(RecordResolution(pending_name, k));
  *key = k;
  return Status::Ok();
}

// Pending names that have no resolved/ marker yet.
Status BlobStore::ListPending(std::vector<std::string>* names) const {
  return ListPending(names, [](std::string_view) { return true; });
}

Status BlobStore::ListPending(std::vector<std::string>* names,
                              const std::function<bool(std::string_view)>& wanted) const {
  names->clear();
  int fd = ::openat(dirfd_.get(), "pending", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return StoreErrno(dir_, "pending");
  UniqueFd pending(fd);
  std::vector<std::string> chosen;
  GUARD_RETURN_IF_ERROR(ForEachDirName(pending.get(), dir_ + "/pending", [&](std::string_view name) {
    if (wanted(name)) chosen.emplace_back(name);
  }));
  for (std::string& name : chosen) {
    struct stat st;
    if (::fstatat(dirfd_.get(), ResolvedPath(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      names->push_back(std::move(name));
    }
  }
  std::sort(names->begin(), names->end());
  return Status::Ok();
}

Status BlobStore::RecordResolution(const std::string& pending_name, const BlobKey& k) {
  // A symlink is made whole (its text with its inode), so a reader sees no
  // marker or a whole one. An older marker (a resolution a crash cut short)
  // is replaced: one made under tmp/ and renamed over it.
  std::string hex = k.Hex();
  const std::string marker = ResolvedPath(pending_name);
  if (::symlinkat(hex.c_str(), dirfd_.get(), marker.c_str()) != 0) {
    if (errno != EEXIST) return StoreErrno(dir_, marker);
    std::string tmp = "tmp/" + UniqueName();
    if (::symlinkat(hex.c_str(), dirfd_.get(), tmp.c_str()) != 0) return StoreErrno(dir_, tmp);
    if (::renameat(dirfd_.get(), tmp.c_str(), dirfd_.get(), marker.c_str()) != 0) {
      int err = errno;
      ::unlinkat(dirfd_.get(), tmp.c_str(), 0);
      return Status::FromErrno(dir_ + "/" + marker, err);
    }
  }
  RememberUnsynced(UniqueFd(), "resolved");
  {
    std::lock_guard<std::mutex> lock(mu_);
    resolved_pending_.append(pending_name).push_back('\0');
  }
  if (observer_ != nullptr) observer_->Resolved(pending_name, k);
  return Status::Ok();
}

}  // namespace guard
