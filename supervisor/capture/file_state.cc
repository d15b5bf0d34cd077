#include "supervisor/capture/file_state.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/file_io.h"
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
  if (fcntl(fd.get(), F_SETLEASE, F_RDLCK) != 0) return false;
  fcntl(fd.get(), F_SETLEASE, F_UNLCK);
  return true;
}

}  // namespace

Status CaptureFileState(const std::string& path, BlobStore* store, ContentCapture how,
                        FileState* out) {
  *out = FileState();
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::Ok();  // kAbsent
    out->type = FileType::kUnknown;
    return Status::FromErrno(path, errno);
  }
  *out = FileStateOfStat(st);
  if (out->type == FileType::kSymlink) return ReadLinkAt(AT_FDCWD, path, path, &out->symlink_target);
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
  return StoreContent(fd.get(), store, out);
}

Status StoreContent(int fd, BlobStore* store, FileState* state) {
  BlobKey key;
  uint64_t size = 0;
  GUARD_RETURN_IF_ERROR(store->PutFd(fd, &key, &size));
  state->blob.kind = BlobRef::Kind::kKey;
  state->blob.key = key;
  state->size = size;
  return Status::Ok();
}

}  // namespace guard
