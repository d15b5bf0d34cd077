#define BOOST_TEST_MODULE git_dir_path
#include <boost/test/unit_test.hpp>

#include "supervisor/base/git_dir_path.h"

namespace guard {
namespace {

struct Row {
  const char* rel;
  bool inside;
  const char* git_dir;
  const char* inner;
  GitDirPart part;
  bool users;
};

const Row kRows[] = {
    {"src/a.c", false, "", "", GitDirPart::kOther, false},
    {".gitignore", false, "", "", GitDirPart::kOther, false},
    {"x.git/HEAD", false, "", "", GitDirPart::kOther, false},
    {".GIT/HEAD", false, "", "", GitDirPart::kOther, false},
    {".git", true, ".git", "", GitDirPart::kGitDir, false},
    {".git/HEAD", true, ".git", "HEAD", GitDirPart::kRef, false},
    {".git/refs", true, ".git", "refs", GitDirPart::kRef, false},
    {".git/refs/heads/main", true, ".git", "refs/heads/main", GitDirPart::kRef, false},
    {".git/refsx", true, ".git", "refsx", GitDirPart::kOther, false},
    {".git/objects/ab/cdef", true, ".git", "objects/ab/cdef", GitDirPart::kObject, false},
    {".git/objects/pack/pack-1.idx", true, ".git", "objects/pack/pack-1.idx", GitDirPart::kObject, false},
    {".git/index", true, ".git", "index", GitDirPart::kIndex, false},
    {".git/index.lock", true, ".git", "index.lock", GitDirPart::kOther, false},
    {".git/refs/heads/main.lock", true, ".git", "refs/heads/main.lock", GitDirPart::kOther, false},
    {".git/HEAD.lock", true, ".git", "HEAD.lock", GitDirPart::kOther, false},
    {".git/hooks/pre-commit", true, ".git", "hooks/pre-commit", GitDirPart::kRunsCode, true},
    {".git/config", true, ".git", "config", GitDirPart::kRunsCode, true},
    {".git/config.worktree", true, ".git", "config.worktree", GitDirPart::kRunsCode, true},
    {".git/info/exclude", true, ".git", "info/exclude", GitDirPart::kOther, true},
    {".git/info/refs", true, ".git", "info/refs", GitDirPart::kOther, false},
    {".git/description", true, ".git", "description", GitDirPart::kOther, true},
    {".git/logs/HEAD", true, ".git", "logs/HEAD", GitDirPart::kOther, false},
    {".git/packed-refs", true, ".git", "packed-refs", GitDirPart::kOther, false},
    {".git/ORIG_HEAD", true, ".git", "ORIG_HEAD", GitDirPart::kOther, false},
    {"sub/.git/refs/heads/x", true, "sub/.git", "refs/heads/x", GitDirPart::kRef, false},
    {".git/modules/m/HEAD", true, ".git", "modules/m/HEAD", GitDirPart::kOther, false},
};

BOOST_AUTO_TEST_CASE(PathsInsideGitDirectoriesAreSortedByWhatGitKeepsThere) {
  for (const Row& row : kRows) {
    GitDirPath p;
    bool inside = ParseGitDirPath(row.rel, &p);
    BOOST_TEST_CONTEXT(row.rel) {
      BOOST_TEST(inside == row.inside);
      if (!inside) continue;
      BOOST_TEST(p.git_dir == row.git_dir);
      BOOST_TEST(p.inner == row.inner);
      BOOST_TEST(static_cast<int>(p.part) == static_cast<int>(row.part));
      BOOST_TEST(GitDirPathIsUsers(p) == row.users);
    }
  }
}

}  // namespace
}  // namespace guard
