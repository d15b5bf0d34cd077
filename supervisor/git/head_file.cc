#include "supervisor/git/head_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/file_io.h"

namespace guard {
namespace {

bool IsHexId(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// The file's first line, without its newline; false if it cannot be read.
bool FirstLine(const std::string& path, std::string* line) {
  std::string text;
  if (!ReadFileToString(path, &text).ok()) return false;
  size_t nl = text.find('\n');
  *line = nl == std::string::npos ? text : text.substr(0, nl);
  return true;
}

}  // namespace

HeadFile ReadHeadFile(const std::string& root, std::string* hex) {
  hex->clear();
  // Up from root to the first `.git`, as libgit2 looks, not across a
  // filesystem boundary (git_repository_open_ext without CROSS_FS).
  std::string dir = root;
  struct stat first;
  if (::stat(root.c_str(), &first) != 0) return HeadFile::kUnknown;
  std::string git;
  for (;;) {
    struct stat st;
    const std::string base = dir == "/" ? "" : dir;
    if (::lstat((base + "/.git").c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return HeadFile::kUnknown;
      git = base + "/.git";
      break;
    }
    // A bare repository or a git directory itself: libgit2's to tell.
    if (::lstat((base + "/HEAD").c_str(), &st) == 0) return HeadFile::kUnknown;
    if (dir == "/" || dir.empty()) return HeadFile::kNone;
    size_t slash = dir.rfind('/');
    std::string up = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
    struct stat up_st;
    if (::stat(up.c_str(), &up_st) != 0) return HeadFile::kUnknown;
    if (up_st.st_dev != first.st_dev) return HeadFile::kNone;
    dir = up;
  }
  struct stat st;
  // reftable, worktrees' own files, a config that makes it bare or moves
  // the work tree: not this reader's.
  if (::lstat((git + "/reftable").c_str(), &st) == 0 || ::lstat((git + "/commondir").c_str(), &st) == 0) {
    return HeadFile::kUnknown;
  }
  std::string config;
  if (!ReadFileToString(git + "/config", &config).ok() || config.find("bare = true") != std::string::npos ||
      config.find("worktree") != std::string::npos || config.find("objectformat") != std::string::npos) {
    return HeadFile::kUnknown;
  }
  std::string head;
  if (!FirstLine(git + "/HEAD", &head)) return HeadFile::kUnknown;
  if (IsHexId(head)) {
    *hex = head;
    return HeadFile::kCommit;
  }
  static constexpr char kRef[] = "ref: refs/heads/";
  if (head.compare(0, std::strlen(kRef), kRef) != 0 || head.find("..") != std::string::npos) {
    return HeadFile::kUnknown;
  }
  const std::string ref = head.substr(5);  // refs/heads/...
  std::string id;
  if (FirstLine(git + "/" + ref, &id)) {
    if (!IsHexId(id)) return HeadFile::kUnknown;
    *hex = id;
    return HeadFile::kCommit;
  }
  std::string packed;
  if (ReadFileToString(git + "/packed-refs", &packed).ok()) {
    for (size_t at = 0; at < packed.size();) {
      size_t nl = packed.find('\n', at);
      if (nl == std::string::npos) nl = packed.size();
      const std::string line = packed.substr(at, nl - at);
      at = nl + 1;
      if (line.size() == 41 + ref.size() && line.compare(41, std::string::npos, ref) == 0 && line[40] == ' ') {
        if (!IsHexId(line.substr(0, 40))) return HeadFile::kUnknown;
        *hex = line.substr(0, 40);
        return HeadFile::kCommit;
      }
    }
  }
  return HeadFile::kUnborn;
}

}  // namespace guard
