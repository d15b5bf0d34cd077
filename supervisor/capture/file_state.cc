#include "supervisor/capture/file_state.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/path_util.h"
#include "common/unique_fd.h"
#include "supervisor/base/stat_state.h"

namespace guard {
namespace {


// Whether no process has `path` open for writing. A read lease can be taken
// only then (fcntl(2), F_SETLEASE); it is released at once. A file adopted
// by hard link shares its inode with the store, so a writer holding it open
// (an editor, a server, an fd the shell inherited) would change the
// pre-image after the fact, and with it the stored object of that content.
// Any failure (a lease already held elsewhere, a file of another owner, a
// filesystem without leases) answers no, and the caller copies instead. A
// writer that opens the file between this check and the call itself is not
// seen: that window is the length of one tracer stop.
bool NobodyWrites(const std::string& path) {
  UniqueFd fd;
  if (!OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, &fd).ok()) return false;
  return os::ProbeReadLease(fd.get());
}


}  // namespace

void FillSignature(const struct stat& st, FileState* out) {
  out->dev = static_cast<uint64_t>(st.st_dev);
  out->ino = static_cast<uint64_t>(st.st_ino);
  out->ctime_ns = TimespecNs(st.st_ctim);
}

bool StillHolds(const FileState& saved, const struct stat& st) {
  if (saved.ino == 0 || saved.type != FileTypeOfMode(st.st_mode)) return false;
  if (saved.dev != static_cast<uint64_t>(st.st_dev) || saved.ino != static_cast<uint64_t>(st.st_ino) ||
      saved.mode != (st.st_mode & 07777)) {
    return false;
  }
  if (saved.type == FileType::kDirectory) return true;
  return saved.size == static_cast<uint64_t>(st.st_size) && saved.mtime_ns == TimespecNs(st.st_mtim) &&
         saved.ctime_ns == TimespecNs(st.st_ctim);
}

Status CaptureFileState(const std::string& path, BlobStore* store, ContentCapture how,
                        FileState* out, struct stat* st_out) {
  return CaptureFileStateFrom(path, KnownLstat(), store, how, out, st_out);
}

Status CaptureFileStateFrom(const std::string& path, const KnownLstat& known, BlobStore* store,
                            ContentCapture how, FileState* out, struct stat* st_out,
                            const SavedVersion* grown_from) {
  *out = FileState();
  if (st_out != nullptr) st_out->st_mode = 0;
  const KnownLstat l = known.made ? known : KnownLstat::Of(path);
  if (l.err != 0) {
    if (l.err == ENOENT || l.err == ENOTDIR) return Status::Ok();  // kAbsent
    out->type = FileType::kUnknown;
    return Status::FromErrno(path, l.err);
  }
  const struct stat& st = l.st;
  if (st_out != nullptr) *st_out = st;
  FillFromStat(st, out);
  if (out->type == FileType::kSymlink) {
    char buf[PATH_MAX + 1];
    ssize_t n = readlink(path.c_str(), buf, PATH_MAX);
    if (n < 0) return Status::FromErrno(path, errno);
    out->symlink_target.assign(buf, static_cast<size_t>(n));
    return Status::Ok();
  }
  if (out->type != FileType::kRegular || how == ContentCapture::kNone) return Status::Ok();

  if (how == ContentCapture::kLinkOrCopy && st.st_nlink == 1 && NobodyWrites(path)) {
    const std::filesystem::path p(path);
    UniqueFd dirfd;
    if (OpenFile(ParentDir(path), O_RDONLY | O_DIRECTORY | O_PATH, 0, &dirfd).ok()) {
      std::string pending;
      Status s = store->AdoptByLink(dirfd.get(), p.filename().string(), &pending);
      if (s.ok()) {
        out->blob.kind = BlobRef::Kind::kPending;
        out->blob.pending = pending;
        return Status::Ok();
      }
      // EXDEV, EPERM (protected_hardlinks), EMLINK: fall back to a copy. A
      // full or failing store fails the copy too and is reported there.
    }
  }
  UniqueFd fd;
  Status s = OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, &fd);
  if (!s.ok()) return s;
  return StoreContent(fd.get(), store, out, grown_from);
}

Status SavedFileState(const KnownLstat& known, const std::string& target, const std::string& pending,
                      ContentCapture how, FileState* out) {
  *out = FileState();
  if (!known.made) {
    out->type = FileType::kUnknown;
    return Status::Unsupported("the producer saved no lstat of the path");
  }
  if (known.err == ENOENT || known.err == ENOTDIR) return Status::Ok();  // kAbsent
  if (known.err != 0) {
    out->type = FileType::kUnknown;
    return Status::FromErrno("lstat before the call", known.err);
  }
  FillFromStat(known.st, out);
  if (out->type == FileType::kSymlink) {
    out->symlink_target = target;
    return Status::Ok();
  }
  if (out->type != FileType::kRegular || how == ContentCapture::kNone) return Status::Ok();
  if (pending.empty()) return Status::Unsupported("the shim saved no pre-image of the content");
  out->blob.kind = BlobRef::Kind::kPending;
  out->blob.pending = pending;
  return Status::Ok();
}

Status SavedFileStateWithContent(const KnownLstat& known, const std::string& content, BlobStore* store,
                                 ContentCapture how, FileState* out) {
  GUARD_RETURN_IF_ERROR(SavedFileState(known, std::string(), std::string(), ContentCapture::kNone, out));
  if (out->type != FileType::kRegular || how == ContentCapture::kNone) return Status::Ok();
  // The feed checked the content against the shim's own lstat; `known` may
  // be a later one capture made (a file found again by another name), of
  // the file as the call left it. The content is the size.
  out->size = content.size();
  BlobKey key;
  GUARD_RETURN_IF_ERROR(store->PutBytes(content, &key));
  out->blob.kind = BlobRef::Kind::kKey;
  out->blob.key = key;
  return Status::Ok();
}

Status CaptureStateWithSignature(const std::string& path, BlobStore* store, FileState* out,
                                 const SavedVersion* grown_from) {
  struct stat st;
  Status s = CaptureFileStateFrom(path, KnownLstat(), store, ContentCapture::kCopy, out, &st, grown_from);
  if (st.st_mode != 0) FillSignature(st, out);
  return s;
}

Status StoreContent(int fd, BlobStore* store, FileState* state, const SavedVersion* grown_from) {
  BlobKey key;
  uint64_t size = 0;
  if (grown_from != nullptr) {
    GUARD_RETURN_IF_ERROR(store->PutFdAfter(fd, grown_from->key, grown_from->size, &key, &size));
  } else {
    GUARD_RETURN_IF_ERROR(store->PutFd(fd, &key, &size));
  }
  state->blob.kind = BlobRef::Kind::kKey;
  state->blob.key = key;
  state->size = size;
  return Status::Ok();
}

}  // namespace guard
