#include "supervisor/base/git_dir_path.h"

namespace guard {
namespace {

bool IsOrUnder(const std::string& inner, const char* dir) {
  std::string d(dir);
  return inner == d || inner.compare(0, d.size() + 1, d + "/") == 0;
}

}  // namespace

bool ParseGitDirPath(const std::string& rel, GitDirPath* out) {
  size_t start = 0;
  while (start <= rel.size()) {
    size_t slash = rel.find('/', start);
    size_t end = slash == std::string::npos ? rel.size() : slash;
    if (rel.compare(start, end - start, ".git") == 0 && end - start == 4) {
      out->git_dir = rel.substr(0, end);
      out->inner = slash == std::string::npos ? "" : rel.substr(slash + 1);
      const std::string& in = out->inner;
      bool lock = in.size() > 5 && in.compare(in.size() - 5, 5, ".lock") == 0;
      if (in.empty()) {
        out->part = GitDirPart::kGitDir;
      } else if (IsOrUnder(in, "objects")) {
        out->part = GitDirPart::kObject;
      } else if (lock) {
        out->part = GitDirPart::kOther;  // git's lock files: there only while a git runs
      } else if (in == "HEAD" || IsOrUnder(in, "refs")) {
        out->part = GitDirPart::kRef;
      } else if (in == "index") {
        out->part = GitDirPart::kIndex;
      } else if (IsOrUnder(in, "hooks") || in == "config" || in == "config.worktree") {
        out->part = GitDirPart::kRunsCode;
      } else {
        out->part = GitDirPart::kOther;
      }
      return true;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return false;
}

bool GitDirPathIsUsers(const GitDirPath& p) {
  // info/refs is written by git gc (update-server-info), not by a person.
  return p.part == GitDirPart::kRunsCode || (IsOrUnder(p.inner, "info") && p.inner != "info/refs") ||
         p.inner == "description";
}

}  // namespace guard
