#include "common/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "common/file_io.h"
#include "common/inbox_layout.h"
#include "common/os_calls.h"
#include "common/path_util.h"

namespace guard {

namespace {

// An environment variable's value, or "" when unset or empty.
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string HomeDir() {
  std::string home = Env("HOME");
  if (!home.empty()) return home;
  // No HOME (a service, `env -i`): fall back to the password database.
  struct passwd pw;
  struct passwd* result = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &result) == 0 && result && result->pw_dir) {
    return result->pw_dir;
  }
  return "";
}

// Makes `path` a directory of mode 0700 owned by us. A directory that others
// can read is tightened rather than refused: it was most likely made by hand
// or by an older tool, and leaving it open would expose the stored files.
Status EnsurePrivateDir(const std::string& path, bool* created) {
  *created = false;
  if (::mkdir(path.c_str(), 0700) == 0) {
    *created = true;
  } else if (errno != EEXIST) {
    return Status::FromErrno(path, errno);
  }
  struct stat st;
  // stat, not lstat: a state directory that is the user's own symlink (to
  // another disk, say) is accepted; realpath later resolves it.
  if (::stat(path.c_str(), &st) != 0) return Status::FromErrno(path, errno);
  if (!S_ISDIR(st.st_mode)) return Status::FromErrno(path, ENOTDIR);
  if (st.st_uid != ::geteuid()) {
    return Status::FromErrno(
        path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user", EPERM);
  }
  if ((st.st_mode & 07777) != 0700 && ::chmod(path.c_str(), 0700) != 0) {
    return Status::FromErrno(path, errno);
  }
  return Status::Ok();
}

}  // namespace

Status StateDirWriteError(const std::string& state_path, const Status& s) {
  if (!s.IsNoSpace()) return s;
  return Status::NoSpace("the state directory is full (" + state_path + "): free space or run `guard gc`");
}

std::string DefaultStatePath() {
  std::string guard_home = Env("GUARD_HOME");
  if (!guard_home.empty()) return guard_home;
  // The XDG spec says a relative XDG_STATE_HOME is invalid and to be ignored.
  std::string xdg = Env("XDG_STATE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/guard";
  std::string home = HomeDir();
  if (home.empty()) return "";
  return home + "/.local/state/guard";
}

Status StateDir::Open(StateDir* out) {
  std::string path = DefaultStatePath();
  if (path.empty()) {
    return Status::InvalidArgument(
        "cannot place the state directory: set GUARD_HOME, XDG_STATE_HOME or HOME");
  }
  return OpenAt(path, out);
}

bool StateDir::inbox_inside() const {
  // A mount of its own (another filesystem, or a bind mount of one): a
  // rename from beside it into the store would fail with EXDEV.
  return os::OwnMount(path_.c_str(), ParentDir(path_).c_str());
}

Status StateDir::MakeSessionInbox(const std::string& id) const {
  bool created = false;
  GUARD_RETURN_IF_ERROR(EnsurePrivateDir(inbox_root(), &created));
  const std::string inbox = session_inbox(id);
  GUARD_RETURN_IF_ERROR(EnsurePrivateDir(inbox, &created));
  for (unsigned shard = 0; shard < GUARD_INBOX_SHARDS; ++shard) {
    GUARD_RETURN_IF_ERROR(EnsurePrivateDir(inbox + "/" + guard_inbox_shard_char(shard), &created));
  }
  return Status::Ok();
}

Status StateDir::OpenAt(const std::string& path, StateDir* out) {
  if (path.empty()) return Status::InvalidArgument("empty state directory path");
  // Parents such as ~/.local/state are created 0700 too, as the XDG spec asks.
  std::string parent = ParentDir(path);
  if (parent != "/" && parent != ".") GUARD_RETURN_IF_ERROR(MakeDirs(parent, 0700));
  bool created = false;
  GUARD_RETURN_IF_ERROR(EnsurePrivateDir(path, &created));

  // Canonical and absolute, so that it means the same after a chdir and can
  // be compared with paths the traced program uses.
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) return Status::FromErrno(path, errno);
  std::string canonical = real;

  bool sub_created = false;
  for (const char* sub : {"/sessions", "/store"}) {
    bool c = false;
    GUARD_RETURN_IF_ERROR(EnsurePrivateDir(canonical + sub, &c));
    sub_created |= c;
  }
  // New directories are made durable at once: sessions and blobs placed in
  // them are later synced on the assumption that their parents exist.
  if (sub_created) GUARD_RETURN_IF_ERROR(FsyncDir(canonical));
  if (created) GUARD_RETURN_IF_ERROR(FsyncDir(ParentDir(canonical)));
  out->path_ = canonical;
  return Status::Ok();
}

Status StateDir::ListSessions(std::vector<std::string>* ids) const {
  ids->clear();
  std::string dir = sessions_dir();
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFile(dir, O_RDONLY | O_DIRECTORY, 0, &fd));
  // Hidden names are not sessions (any temporary entry). The type is the
  // directory entry's, looked up only where the filesystem does not give
  // it: every command lists the sessions, and a stat each was most of it.
  GUARD_RETURN_IF_ERROR(ForEachDirEntry(fd.get(), dir, [&](std::string_view name, unsigned char type) {
    if (name.empty() || name[0] == '.') return;
    std::string n(name);
    bool is_dir = type == DT_DIR;
    if (type == DT_UNKNOWN) {
      struct stat st;
      is_dir = ::fstatat(fd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) ids->push_back(std::move(n));
  }));
  std::sort(ids->begin(), ids->end());
  return Status::Ok();
}

}  // namespace guard
