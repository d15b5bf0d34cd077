#include "supervisor/session/recovery_end_state.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "supervisor/capture/file_state.h"

namespace guard {
namespace {

int64_t CtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
}

}  // namespace

int64_t SupervisorLastAlive(const std::string& session_dir) {
  struct stat st;
  if (stat((session_dir + "/alive").c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

RecoveredEndState::RecoveredEndState(const SessionHistory* history, BlobStore* store, std::string root,
                                     int64_t alive_ns)
    : history_(history), store_(store), root_(std::move(root)), alive_ns_(alive_ns) {}

void RecoveredEndState::AddPaths(std::set<std::string>* paths) const {
  // The tree (walked below moved directories) may no longer show what the
  // session left: every name the journal knows, at its end.
  for (std::string& p : history_->PostImagedPaths()) paths->insert(std::move(p));
  for (const std::string& p : history_->NamesAtEnd()) paths->insert(p);
}

bool RecoveredEndState::Holds(const FileState& saved, const std::string& abs, bool exists,
                              const struct stat& st) const {
  if (!exists) return saved.type == FileType::kAbsent;
  if (saved.type != FileTypeOfMode(st.st_mode)) return false;
  if (StillHolds(saved, st)) return true;
  switch (saved.type) {
    case FileType::kSymlink: {
      char buf[PATH_MAX + 1];
      ssize_t n = readlink(abs.c_str(), buf, PATH_MAX);
      return n >= 0 && saved.symlink_target == std::string(buf, static_cast<size_t>(n));
    }
    case FileType::kRegular: {
      // Touched, chown'ed or rewritten with the same bytes: the content decides.
      if (saved.mode != (st.st_mode & 07777) || saved.size != static_cast<uint64_t>(st.st_size) ||
          saved.blob.kind != BlobRef::Kind::kKey) {
        return false;
      }
      UniqueFd fd;
      BlobKey key;
      return OpenFile(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, &fd).ok() &&
             BlobKey::OfFd(fd.get(), abs, &key).ok() && key == saved.blob.key;
    }
    default:
      return saved.mode == (st.st_mode & 07777);
  }
}

bool RecoveredEndState::ChangedAfterDeath(const std::string& rel, bool exists, const struct stat& st) const {
  if (alive_ns_ == 0) return false;
  if (exists) return CtimeNs(st) > alive_ns_;
  // Whatever removed it changed the directory it was in, or, when that went
  // too (or became a file), the path above that, and so on.
  struct stat deepest;
  if (lstat(root_.c_str(), &deepest) != 0) return false;
  std::string path = root_ == "/" ? "" : root_;
  for (size_t start = 0; start < rel.size();) {
    size_t slash = rel.find('/', start);
    if (slash == std::string::npos) break;  // rel itself: absent
    path += "/" + rel.substr(start, slash - start);
    struct stat up;
    if (lstat(path.c_str(), &up) != 0) break;
    deepest = up;
    if (!S_ISDIR(up.st_mode)) break;
    start = slash + 1;
  }
  return CtimeNs(deepest) > alive_ns_;
}

Status RecoveredEndState::Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
                               uint32_t* flags) {
  *flags = 0;
  struct stat st;
  bool exists = beneath && lstat(abs.c_str(), &st) == 0;
  if (beneath && !exists && errno != ENOENT && errno != ENOTDIR) {
    return CaptureStateWithSignature(abs, store_, out);
  }
  // What the tree holds: nothing beneath the root below a file or symlink.
  auto read_tree = [&]() -> Status {
    if (!beneath) {
      *out = FileState();
      return Status::Ok();
    }
    return CaptureStateWithSignature(abs, store_, out);
  };
  FileState saved;
  bool no_writer = false;
  if (!history_->LastRecordedState(rel, &saved, &no_writer)) {
    Status s = read_tree();
    if (ChangedAfterDeath(rel, exists, st)) {
      *flags = kEndNotSaved;
      ++end_not_saved_;
    }
    return s;
  }
  if (Holds(saved, abs, exists, st)) {
    *out = saved;
    if (exists) {
      // The tree's metadata, so that the next look at it takes one lstat.
      FillFromStat(st, out);
      FillSignature(st, out);
    }
    return Status::Ok();
  }
  // Could a process of the session have made this difference without a call
  // the journal would hold? Only by writing through a file it still had
  // open when the post-image was saved: same file, same inode.
  bool session_may_have_written = !no_writer && exists && saved.type == FileType::kRegular &&
                                  S_ISREG(st.st_mode) &&
                                  (saved.ino == 0 || (saved.ino == static_cast<uint64_t>(st.st_ino) &&
                                                      saved.dev == static_cast<uint64_t>(st.st_dev)));
  if (!session_may_have_written || ChangedAfterDeath(rel, exists, st)) {
    *out = saved;
    *flags = kChangedAfterEnd;
    ++kept_saved_;
    return Status::Ok();
  }
  return read_tree();
}

}  // namespace guard
