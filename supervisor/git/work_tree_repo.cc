#include "supervisor/git/work_tree_repo.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/path_util.h"

namespace guard {
namespace {

std::string Canonical(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return path;
  return buf;
}

// `path` relative to `dir` ("" for dir itself), or false when outside it.
bool RelativeTo(const std::string& path, const std::string& dir, std::string* rel) {
  if (path == dir) {
    rel->clear();
    return true;
  }
  if (!PathIsStrictlyUnder(path, dir)) return false;
  *rel = path.substr(dir == "/" ? 1 : dir.size() + 1);
  return true;
}

// Whether git's upward search from `root` could find anything: a `.git`
// (directory, or a file naming one) in root or a directory above it, or a
// directory above that is a git directory itself (HEAD and objects/). A
// superset of what libgit2 looks at, checked without it: initialising
// libgit2 loads the system's CA certificates (its TLS backend's global
// init, about 3 ms of CPU here), which a session outside any repository,
// the usual one, need not pay for at its start and its end.
bool MayBeInAGitRepository(const std::string& root) {
  std::string dir = root;
  for (;;) {
    struct stat st;
    const std::string base = dir == "/" ? "" : dir;
    if (::lstat((base + "/.git").c_str(), &st) == 0) return true;
    if (::lstat((base + "/HEAD").c_str(), &st) == 0 && ::lstat((base + "/objects").c_str(), &st) == 0) return true;
    if (dir == "/" || dir.empty()) return false;
    size_t slash = dir.rfind('/');
    dir = slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
  }
}

}  // namespace

Status WorkTreeRepo::Open(const std::string& root, const std::string& state_dir, WorkTreeRepo* out) {
  if (!MayBeInAGitRepository(root)) return Status::NotFound(root + ": not in a git work tree");
  InitGitLibrary();
  git_repository* repo = nullptr;
  int rc = git_repository_open_ext(&repo, root.c_str(), 0, nullptr);
  if (rc < 0) return GitError(rc, root + ": not in a git work tree");
  out->repo_.reset(repo);
  const char* wd = git_repository_workdir(repo);
  if (wd == nullptr) return Status::NotFound(root + ": the repository around it is bare");
  std::string work_tree = wd;
  while (work_tree.size() > 1 && work_tree.back() == '/') work_tree.pop_back();
  out->work_tree_ = Canonical(work_tree);
  std::string rel;
  if (!RelativeTo(root, out->work_tree_, &rel)) {
    return Status::NotFound(root + ": not inside the work tree " + out->work_tree_);
  }
  out->root_prefix_ = rel.empty() ? "" : rel + "/";
  out->state_prefix_.clear();
  if (RelativeTo(state_dir, out->work_tree_, &rel)) out->state_prefix_ = rel.empty() ? "." : rel;
  return Status::Ok();
}

bool WorkTreeRepo::RepoPath(const std::string& rel, std::string* out) const {
  if (rel.empty() || rel == ".") return false;
  std::string path = root_prefix_ + rel;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, ".git") == 0) return false;
    start = end + 1;
  }
  if (state_prefix_ == "." || (!state_prefix_.empty() && PathIsUnder(path, state_prefix_))) return false;
  *out = std::move(path);
  return true;
}

Status WorkTreeRepo::HeadCommit(git_oid* out) const {
  int rc = git_reference_name_to_id(out, repo_.get(), "HEAD");
  if (rc < 0) return GitError(rc, "HEAD");
  return Status::Ok();
}

}  // namespace guard
