#include "tests/e2e/support/tree_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/file_io.h"
#include "common/unique_fd.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

[[noreturn]] void Fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// The names in the directory open as `dirfd` (read through a duplicate).
std::vector<std::string> ListDir(int dirfd, const std::string& rel) {
  std::vector<std::string> names;
  int fd = dup(dirfd);
  DIR* d = fd < 0 ? nullptr : fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    if (fd >= 0) close(fd);
    Fail("opendir " + Printable(rel), err);
  }
  errno = 0;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
    errno = 0;
  }
  int err = errno;
  closedir(d);
  if (err != 0) Fail("readdir " + Printable(rel), err);
  return names;
}

// Walks relative to directory fds rather than by absolute path, so that a
// tree deeper than PATH_MAX can be compared too.
void Walk(int dirfd, const std::string& rel, TreeSnapshot* out) {
  for (const std::string& name : ListDir(dirfd, rel)) {
    std::string child_rel = rel.empty() ? name : rel + "/" + name;
    struct stat st;
    if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) Fail("lstat " + Printable(child_rel), errno);
    TreeEntry e;
    e.mode = st.st_mode & 07777;
    if (S_ISREG(st.st_mode)) {
      e.type = FileType::kRegular;
      UniqueFd fd;
      Status s = OpenFileAt(dirfd, name, O_RDONLY | O_NOFOLLOW, 0, &fd);
      char buf[65536];
      for (size_t got = sizeof buf; s.ok() && got == sizeof buf;) {
        s = ReadFull(fd.get(), buf, sizeof buf, &got, child_rel);
        e.content.append(buf, got);
      }
      if (!s.ok()) throw std::runtime_error(s.ToString());
    } else if (S_ISDIR(st.st_mode)) {
      e.type = FileType::kDirectory;
    } else if (S_ISLNK(st.st_mode)) {
      e.type = FileType::kSymlink;
      char buf[PATH_MAX + 1];
      ssize_t n = readlinkat(dirfd, name.c_str(), buf, PATH_MAX);
      if (n < 0) Fail("readlink " + Printable(child_rel), errno);
      e.target.assign(buf, static_cast<size_t>(n));
    } else {
      e.type = FileType::kOther;
    }
    out->entries[child_rel] = e;
    if (e.type == FileType::kDirectory) {
      UniqueFd sub;
      Status s = OpenFileAt(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &sub);
      if (!s.ok()) throw std::runtime_error(s.ToString());
      Walk(sub.get(), child_rel, out);
    }
  }
}

std::string Abbreviate(const std::string& content) {
  constexpr size_t kMax = 60;
  std::string p = Printable(content.substr(0, kMax));
  return "\"" + p + (content.size() > kMax ? "\"..." : "\"");
}

}  // namespace

const TreeEntry* TreeSnapshot::Find(const std::string& rel) const {
  auto it = entries.find(rel);
  return it == entries.end() ? nullptr : &it->second;
}

TreeSnapshot TreeSnapshot::Without(const std::string& prefix) const {
  TreeSnapshot out;
  for (const auto& [path, e] : entries) {
    bool under = path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                                    path[prefix.size()] == '/');
    if (!under) out.entries.emplace(path, e);
  }
  return out;
}

std::map<std::string, std::string> TreeSnapshot::Files() const {
  std::map<std::string, std::string> out;
  for (const auto& [path, e] : entries) {
    if (e.type == FileType::kRegular) out.emplace(path, e.content);
  }
  return out;
}

TreeSnapshot SnapshotTree(const std::string& root) {
  UniqueFd fd;
  Status s = OpenFile(root, O_RDONLY | O_DIRECTORY, 0, &fd);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  TreeSnapshot out;
  Walk(fd.get(), "", &out);
  return out;
}

std::string Describe(const TreeEntry& e) {
  char mode[16];
  std::snprintf(mode, sizeof mode, "%04o", e.mode);
  std::string out = std::string(FileTypeName(e.type)) + " " + mode;
  if (e.type == FileType::kRegular) out += " " + std::to_string(e.content.size()) + " bytes " + Abbreviate(e.content);
  if (e.type == FileType::kSymlink) out += " -> " + Printable(e.target);
  return out;
}

std::vector<std::string> DiffSnapshots(const TreeSnapshot& expected, const TreeSnapshot& actual) {
  std::vector<std::string> diffs;
  for (const auto& [path, e] : expected.entries) {
    const TreeEntry* a = actual.Find(path);
    if (a == nullptr) {
      diffs.push_back(Printable(path) + ": missing (expected " + Describe(e) + ")");
    } else if (!(*a == e)) {
      diffs.push_back(Printable(path) + ": expected " + Describe(e) + ", found " + Describe(*a));
    }
  }
  for (const auto& [path, a] : actual.entries) {
    if (expected.Find(path) == nullptr) diffs.push_back(Printable(path) + ": unexpected " + Describe(a));
  }
  return diffs;
}

}  // namespace guard::e2e

namespace guard::e2e {

void WriteSnapshot(const std::string& root, const TreeSnapshot& snapshot) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    // Writable first, so that a directory of mode 0500 can be emptied.
    for (auto it = std::filesystem::recursive_directory_iterator(entry.path(), ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) chmod(it->path().c_str(), 0700);
    }
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) chmod(entry.path().c_str(), 0700);
    std::filesystem::remove_all(entry.path(), ec);
    if (ec) throw std::runtime_error("removing " + entry.path().string() + ": " + ec.message());
  }
  if (ec) throw std::runtime_error("listing " + root + ": " + ec.message());
  for (const auto& [rel, e] : snapshot.entries) {  // sorted: parents before children
    std::string path = root + "/" + rel;
    switch (e.type) {
      case FileType::kDirectory:
        if (mkdir(path.c_str(), 0700) != 0) Fail("mkdir " + Printable(rel), errno);
        break;
      case FileType::kRegular:
        WriteFile(path, e.content, static_cast<mode_t>(e.mode));
        break;
      case FileType::kSymlink:
        MakeSymlink(e.target, path);
        break;
      default:
        if (mkfifo(path.c_str(), 0600) != 0 || chmod(path.c_str(), static_cast<mode_t>(e.mode)) != 0) {
          Fail("mkfifo " + Printable(rel), errno);
        }
        break;
    }
  }
  for (auto it = snapshot.entries.rbegin(); it != snapshot.entries.rend(); ++it) {
    if (it->second.type != FileType::kDirectory) continue;
    if (chmod((root + "/" + it->first).c_str(), static_cast<mode_t>(it->second.mode)) != 0) {
      Fail("chmod " + Printable(it->first), errno);
    }
  }
}

}  // namespace guard::e2e
