#include "common/file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "common/path_util.h"

namespace guard {

Status WriteAll(int fd, const void* data, size_t n, std::string_view what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = GUARD_EINTR_RETRY(::write(fd, p, n));
    if (w < 0) return Status::FromErrno(what, errno);
    if (w == 0) return Status::FromErrno(what, EIO);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status PwriteAll(int fd, const void* data, size_t n, off_t offset, std::string_view what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = GUARD_EINTR_RETRY(::pwrite(fd, p, n, offset));
    if (w < 0) return Status::FromErrno(what, errno);
    if (w == 0) return Status::FromErrno(what, EIO);
    p += w;
    n -= static_cast<size_t>(w);
    offset += w;
  }
  return Status::Ok();
}

Status ReadFull(int fd, void* data, size_t n, size_t* got, std::string_view what) {
  char* p = static_cast<char*>(data);
  size_t total = 0;
  while (total < n) {
    ssize_t r = GUARD_EINTR_RETRY(::read(fd, p + total, n - total));
    if (r < 0) return Status::FromErrno(what, errno);
    if (r == 0) break;
    total += static_cast<size_t>(r);
  }
  *got = total;
  return Status::Ok();
}

Status PreadFull(int fd, void* data, size_t n, off_t offset, size_t* got, std::string_view what) {
  char* p = static_cast<char*>(data);
  size_t total = 0;
  while (total < n) {
    ssize_t r = GUARD_EINTR_RETRY(::pread(fd, p + total, n - total, offset + static_cast<off_t>(total)));
    if (r < 0) return Status::FromErrno(what, errno);
    if (r == 0) break;
    total += static_cast<size_t>(r);
  }
  *got = total;
  return Status::Ok();
}

Status OpenFile(const std::string& path, int flags, mode_t mode, UniqueFd* out) {
  return OpenFileAt(AT_FDCWD, path, flags, mode, out);
}

Status OpenFileAt(int dirfd, const std::string& name, int flags, mode_t mode, UniqueFd* out) {
  int fd = static_cast<int>(GUARD_EINTR_RETRY(::openat(dirfd, name.c_str(), flags | O_CLOEXEC, mode)));
  if (fd < 0) return Status::FromErrno(name, errno);
  out->reset(fd);
  return Status::Ok();
}

Status ReadLinkAt(int dirfd, const std::string& name, std::string_view what, std::string* target) {
  char buf[PATH_MAX + 1];
  const ssize_t n = ::readlinkat(dirfd, name.c_str(), buf, PATH_MAX);
  if (n < 0) return Status::FromErrno(what, errno);
  target->assign(buf, static_cast<size_t>(n));
  return Status::Ok();
}

Status ReadFileToString(const std::string& path, std::string* out) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_RDONLY, 0, &fd));
  out->clear();
  char buf[65536];
  for (;;) {
    size_t got = 0;
    GUARD_RETURN_IF_ERROR(ReadFull(fd.get(), buf, sizeof buf, &got, path));
    out->append(buf, got);
    if (got < sizeof buf) break;
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(tmp, O_WRONLY | O_CREAT | O_EXCL, mode, &fd));
  Status s = WriteAll(fd.get(), data.data(), data.size(), tmp);
  if (s.ok()) s = FsyncFd(fd.get(), tmp);
  if (s.ok() && ::fchmod(fd.get(), mode) != 0) s = Status::FromErrno(tmp, errno);
  fd.reset();
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = Status::FromErrno(path, errno);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return FsyncDir(ParentDir(path));
}

Status ReadDirNames(int dir_fd, std::string_view what, std::vector<std::string>* names) {
  names->clear();
  return ForEachDirName(dir_fd, what, [names](std::string_view name) { names->emplace_back(name); });
}

Status ForEachDirName(int dir_fd, std::string_view what, const std::function<void(std::string_view)>& fn) {
  return ForEachDirEntry(dir_fd, what, [&fn](std::string_view name, unsigned char) { fn(name); });
}

Status ForEachDirEntry(int dir_fd, std::string_view what,
                       const std::function<void(std::string_view name, unsigned char type)>& fn) {
  // fdopendir takes the fd it is given: give it a duplicate, opened afresh
  // at the start (a dup would share the caller's directory offset).
  int fd = static_cast<int>(GUARD_EINTR_RETRY(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (fd < 0) return Status::FromErrno(what, errno);
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    ::close(fd);
    return Status::FromErrno(what, err);
  }
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") fn(name, e->d_type);
    errno = 0;
  }
  int err = errno;
  ::closedir(d);
  return err != 0 ? Status::FromErrno(what, err) : Status::Ok();
}

Status FsyncFd(int fd, std::string_view what) {
  if (GUARD_EINTR_RETRY(::fsync(fd)) != 0) return Status::FromErrno(what, errno);
  return Status::Ok();
}

Status FsyncDir(const std::string& dir) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(dir, O_RDONLY | O_DIRECTORY, 0, &fd));
  return FsyncFd(fd.get(), dir);
}

Status MakeDirs(const std::string& path, mode_t mode) {
  if (path.empty()) return Status::InvalidArgument("empty directory path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return Status::FromErrno(path, ENOTDIR);
  }
  std::string parent = ParentDir(path);
  if (parent != path && parent != "." && parent != "/") GUARD_RETURN_IF_ERROR(MakeDirs(parent, mode));
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return Status::FromErrno(path, errno);
  return Status::Ok();
}

}  // namespace guard
