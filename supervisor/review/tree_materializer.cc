#include "supervisor/review/tree_materializer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/file_io.h"
#include "common/os_calls.h"

namespace guard {
namespace {

// Splits a root-relative path into its components; false for a name that
// could leave the tree or is not in normal form.
bool SplitPath(const std::string& path, std::vector<std::string>* parts) {
  if (path.empty() || path[0] == '/') return false;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    parts->push_back(std::move(part));
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

timespec ToTimespec(int64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  if (ts.tv_nsec < 0) {
    ts.tv_nsec += 1000000000;
    ts.tv_sec -= 1;
  }
  return ts;
}

// Sets atime and mtime to `mtime_ns`; a state recorded without one keeps now.
void SetTimes(int dirfd, const std::string& name, int64_t mtime_ns) {
  if (mtime_ns == 0) return;
  timespec times[2] = {ToTimespec(mtime_ns), ToTimespec(mtime_ns)};
  // Best effort: times are shown by tar only, never compared.
  (void)::utimensat(dirfd, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

mode_t TreeMaterializer::FileMode(uint32_t mode) const {
  return options_.owner_can_read ? (mode & 07777) | 0600 : mode & 07777;
}

mode_t TreeMaterializer::DirMode(uint32_t mode) const {
  return options_.owner_can_read ? (mode & 07777) | 0700 : mode & 07777;
}

Status TreeMaterializer::Open(const std::string& dir, const BlobStore* store, Options options,
                              TreeMaterializer* out) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(dir, O_RDONLY | O_DIRECTORY, 0, &fd));
  out->dir_ = dir;
  out->dirfd_ = std::move(fd);
  out->store_ = store;
  out->options_ = options;
  out->dirs_.clear();
  return Status::Ok();
}

Status TreeMaterializer::OpenParent(const std::string& path, bool create, UniqueFd* parent,
                                    std::string* name) const {
  std::vector<std::string> parts;
  if (!SplitPath(path, &parts)) return Status::InvalidArgument(path + ": not a normal relative path");
  UniqueFd cur;
  int at = dirfd_.get();
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const char* part = parts[i].c_str();
    int fd = static_cast<int>(
        GUARD_EINTR_RETRY(::openat(at, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(at, part, 0755) != 0 && errno != EEXIST) return Status::FromErrno(path, errno);
      fd = static_cast<int>(
          GUARD_EINTR_RETRY(::openat(at, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    }
    if (fd < 0) {
      if (errno == ENOTDIR || errno == ELOOP) {
        return Status::InvalidArgument(path + ": a parent is not a directory at that moment");
      }
      return Status::FromErrno(path, errno);
    }
    cur.reset(fd);
    at = cur.get();
  }
  if (cur.valid()) {
    *parent = std::move(cur);
  } else {
    int fd =
        static_cast<int>(GUARD_EINTR_RETRY(::openat(dirfd_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC)));
    if (fd < 0) return Status::FromErrno(dir_, errno);
    parent->reset(fd);
  }
  *name = parts.back();
  return Status::Ok();
}

Status TreeMaterializer::Put(const std::string& path, const FileState& state) {
  if (state.type == FileType::kAbsent) return Status::Ok();
  if (path == ".") return Status::Ok();  // the tree itself: see the header
  if (state.type == FileType::kOther) {
    return Status::Unsupported(path + ": fifo, socket or device node: not reproduced");
  }
  if (state.type == FileType::kUnknown) return Status::Unsupported(path + ": state not recorded");
  if (state.type == FileType::kRegular && state.blob.kind == BlobRef::Kind::kNone) {
    return Status::NotFound(path + ": content not recorded");
  }
  UniqueFd parent;
  std::string name;
  GUARD_RETURN_IF_ERROR(OpenParent(path, /*create=*/true, &parent, &name));
  switch (state.type) {
    case FileType::kDirectory:
      // 0700 while it is being filled; Finish gives it its own mode.
      if (::mkdirat(parent.get(), name.c_str(), 0700) != 0) {
        struct stat st;
        if (errno != EEXIST || ::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode)) {
          return Status::FromErrno(path, errno == 0 ? EEXIST : errno);
        }
      }
      dirs_.push_back({path, state.mode, state.mtime_ns});
      return Status::Ok();
    case FileType::kSymlink:
      if (::symlinkat(state.symlink_target.c_str(), parent.get(), name.c_str()) != 0) {
        return Status::FromErrno(path, errno);
      }
      SetTimes(parent.get(), name, state.mtime_ns);
      return Status::Ok();
    case FileType::kRegular: {
      UniqueFd fd;
      GUARD_RETURN_IF_ERROR(
          OpenFileAt(parent.get(), name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, &fd));
      uint64_t size = 0;
      Status s = store_->ReadTo(state.blob, fd.get(), &size);
      if (s.ok() && ::fchmod(fd.get(), FileMode(state.mode)) != 0) s = Status::FromErrno(path, errno);
      if (!s.ok()) {
        ::unlinkat(parent.get(), name.c_str(), 0);
        if (s.IsNotFound()) return Status::NotFound(path + ": " + s.message());
        if (s.IsCorruption()) return Status::Corruption(path + ": " + s.message());
        return s;
      }
      fd.reset();
      SetTimes(parent.get(), name, state.mtime_ns);
      return Status::Ok();
    }
    default: return Status::Unsupported(path + ": unexpected type");
  }
}

Status TreeMaterializer::Remove(const std::string& path) {
  UniqueFd parent;
  std::string name;
  Status s = OpenParent(path, /*create=*/false, &parent, &name);
  if (!s.ok()) return s.IsNotFound() ? Status::Ok() : s;
  if (::unlinkat(parent.get(), name.c_str(), 0) != 0 && errno != ENOENT && errno != EISDIR) {
    return Status::FromErrno(path, errno);
  }
  return Status::Ok();
}

Status TreeMaterializer::Finish() {
  auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '/'); };
  std::stable_sort(dirs_.begin(), dirs_.end(),
                   [&](const PendingDir& a, const PendingDir& b) { return depth(a.path) > depth(b.path); });
  for (const PendingDir& d : dirs_) {
    UniqueFd parent, fd;
    std::string name;
    GUARD_RETURN_IF_ERROR(OpenParent(d.path, /*create=*/false, &parent, &name));
    GUARD_RETURN_IF_ERROR(OpenFileAt(parent.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &fd));
    if (d.mtime_ns != 0) {
      timespec times[2] = {ToTimespec(d.mtime_ns), ToTimespec(d.mtime_ns)};
      (void)::futimens(fd.get(), times);
    }
    if (::fchmod(fd.get(), DirMode(d.mode)) != 0) return Status::FromErrno(d.path, errno);
  }
  dirs_.clear();
  return Status::Ok();
}

}  // namespace guard
