#include "supervisor/watch/inotify_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/file_io.h"
#include "common/path_util.h"

namespace guard {
namespace {

// What a watch on a directory reports: its entries made, removed, moved,
// written, closed after writing, and their metadata; the directory's own
// removal or move. IN_EXCL_UNLINK: nothing of a file after its last name
// is gone (a deleted file still written through an fd is not the tree's).
constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_MOVED_FROM |
                           IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK | IN_ONLYDIR;

// Deeper than any tree guard protects: past it, the source is blind there.
constexpr int kMaxDepth = 2048;

}  // namespace

Status InotifySource::Open(const std::string& root, std::vector<std::string> excluded,
                           std::unique_ptr<InotifySource>* out) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Status::FromErrno("inotify_init1", errno);
  std::unique_ptr<InotifySource> source(new InotifySource(root, std::move(excluded), UniqueFd(fd)));
  source->WatchTree(root);
  if (source->dirs_.empty()) return Status::FromErrno("inotify: cannot watch " + root, errno != 0 ? errno : EIO);
  *out = std::move(source);
  return Status::Ok();
}

bool InotifySource::Excluded(const std::string& abs) const {
  for (const std::string& e : excluded_) {
    if (PathIsUnder(abs, e)) return true;
  }
  return false;
}

void InotifySource::WatchTree(const std::string& abs) {
  if (Excluded(abs)) return;
  int fd = static_cast<int>(GUARD_EINTR_RETRY(::open(abs.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
  if (fd < 0) {
    // Gone again, or no directory any more: its own event says so.
    if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) blind_ = true;
    return;
  }
  UniqueFd dir(fd);
  WatchDir(dir.get(), abs, 0);
}

// The watch is added through the open directory's /proc/self/fd link, so
// that it is on the very directory listed next, whatever its name leads
// to by now.
void InotifySource::WatchDir(int dir_fd, const std::string& abs, int depth) {
  if (depth > kMaxDepth) {
    blind_ = true;
    return;
  }
  const std::string link = "/proc/self/fd/" + std::to_string(dir_fd);
  int wd = inotify_add_watch(fd_.get(), link.c_str(), kMask);
  if (wd < 0) {
    blind_ = true;  // ENOSPC: the user's watch limit (fs.inotify.max_user_watches)
    return;
  }
  // A directory watched already keeps its descriptor: its path is
  // brought up to date (it was moved).
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) {
    blind_ = true;
    return;
  }
  dirs_[wd] = WatchedDir{abs, st.st_dev, st.st_ino};
  int list_fd = static_cast<int>(GUARD_EINTR_RETRY(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
  if (list_fd < 0) {
    blind_ = true;
    return;
  }
  DIR* d = fdopendir(list_fd);
  if (d == nullptr) {
    ::close(list_fd);
    blind_ = true;
    return;
  }
  while (struct dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    int sub = static_cast<int>(
        GUARD_EINTR_RETRY(::openat(dir_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    if (sub < 0) continue;  // not a directory (DT_UNKNOWN), or gone: its own event says so
    UniqueFd below(sub);
    const std::string path = abs + "/" + e->d_name;
    if (!Excluded(path)) WatchDir(below.get(), path, depth + 1);
  }
  closedir(d);
}

void InotifySource::Unwatch(const std::string& abs) {
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    struct stat st {};
    if (PathIsUnder(it->second.path, abs) &&
        (::lstat(it->second.path.c_str(), &st) != 0 || st.st_dev != it->second.dev || st.st_ino != it->second.ino)) {
      inotify_rm_watch(fd_.get(), it->first);
      it = dirs_.erase(it);
    } else {
      ++it;
    }
  }
}

void InotifySource::Decode(const char* buf, size_t len, std::vector<WatchHint>* out) {
  for (size_t off = 0; off + sizeof(struct inotify_event) <= len;) {
    struct inotify_event ev;
    std::memcpy(&ev, buf + off, sizeof ev);
    const char* name = buf + off + sizeof ev;
    off += sizeof ev + ev.len;
    if (ev.mask & IN_Q_OVERFLOW) {
      // Events were lost, and with them perhaps directories made since:
      // every directory is watched again (a directory watched already
      // keeps its watch), then everything is compared.
      ++overflows_;
      WatchTree(root_);
      out->push_back({root_, WatchHint::Scope::kAll});
      continue;
    }
    if (ev.mask & IN_IGNORED) {
      dirs_.erase(ev.wd);
      continue;
    }
    auto dir = dirs_.find(ev.wd);
    if (dir == dirs_.end()) continue;  // a watch dropped since (its directory moved away)
    if (ev.len == 0 || name[0] == '\0') {
      // The directory itself: removed, moved, or its metadata changed.
      if (dir->second.path == root_ && (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF))) {
        out->push_back({root_, WatchHint::Scope::kAll});
      } else {
        out->push_back({dir->second.path, WatchHint::Scope::kPath});
      }
      continue;
    }
    const std::string path = dir->second.path + "/" + name;
    if (ev.mask & IN_ISDIR) {
      if (ev.mask & IN_MOVED_FROM) Unwatch(path);
      if (ev.mask & (IN_CREATE | IN_MOVED_TO)) WatchTree(path);
      out->push_back({path, (ev.mask & IN_ATTRIB) ? WatchHint::Scope::kPath : WatchHint::Scope::kTree});
    } else {
      out->push_back({path, WatchHint::Scope::kPath});
    }
  }
}

Status InotifySource::ReadQueued(std::vector<WatchHint>* out, bool* read_any) {
  *read_any = false;
  // Room for many events per read; an event is at most 16 + NAME_MAX + 1 bytes.
  alignas(struct inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) return Status::FromErrno("inotify read", errno);
    if (n == 0) break;
    *read_any = true;
    Decode(buf, static_cast<size_t>(n), out);
  }
  if (blind_) out->push_back({root_, WatchHint::Scope::kAll});
  return Status::Ok();
}

Status InotifySource::Wait(std::vector<WatchHint>* out, std::chrono::milliseconds timeout) {
  struct pollfd p = {fd_.get(), POLLIN, 0};
  int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (r < 0 && errno != EINTR) return Status::FromErrno("inotify poll", errno);
  bool any = false;
  return ReadQueued(out, &any);
}

// inotify queues an event inside the call that made the change, before
// the call returns: every change made before Drain was called is queued by
// then, and read here.
Status InotifySource::Drain(std::vector<WatchHint>* out) {
  bool any = false;
  return ReadQueued(out, &any);
}

}  // namespace guard
