// ReadHeadFile (supervisor/git/head_file.h) against git itself, one real
// repository per row, made by the git command: the layouts it reads give
// `git rev-parse HEAD`'s answer without initialising libgit2, and those it
// does not read it says it does not know (GitHeadAt then asks libgit2).
#define BOOST_TEST_MODULE head_file
#include <boost/test/unit_test.hpp>

#include <git2.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "supervisor/git/checkpoint.h"
#include "supervisor/git/head_file.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

std::string Out(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

struct Case {
  const char* layout;
  const char* script;  // run in the repository, after `git init` and one commit on main
  HeadFile want;
};

const char* const kCommit =
    "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one && ";

BOOST_AUTO_TEST_CASE(EachLayoutReadsAsGitReadsIt) {
  const Case cases[] = {
      {"a branch in a loose ref", "true", HeadFile::kCommit},
      {"a branch in packed-refs", "git pack-refs --all", HeadFile::kCommit},
      {"a detached HEAD", "git checkout -q --detach", HeadFile::kCommit},
      {"an unborn branch", "git checkout -q --orphan fresh", HeadFile::kUnborn},
      {"a linked work tree (.git is a file)", "git worktree add -q ../linked && cd ../linked", HeadFile::kUnknown},
  };
  for (const Case& c : cases) {
    testing::TempDir tmp;
    const std::string repo = tmp.path + "/repo";
    const std::string script = "mkdir -p " + repo + " && cd " + repo + " && git init -q -b main . && " + kCommit +
                               std::string(c.script) + " && pwd";
    const std::string where = Out("bash -c '" + script + "' 2>/dev/null");
    BOOST_REQUIRE_MESSAGE(!where.empty(), c.layout);
    std::string hex;
    HeadFile got = ReadHeadFile(where, &hex);
    BOOST_TEST((got == c.want), c.layout);
    const std::string git_says = Out("git -C " + where + " rev-parse -q --verify HEAD 2>/dev/null");
    if (c.want == HeadFile::kCommit) BOOST_TEST(hex == git_says, c.layout);
    // GitHeadAt answers as git does, by whichever way.
    BOOST_TEST(GitHeadAt(where, tmp.path + "/state") == git_says, c.layout);
  }
}

BOOST_AUTO_TEST_CASE(OutsideAnyRepositoryNothingIsRead) {
  testing::TempDir tmp;
  BOOST_REQUIRE_MESSAGE(std::system(("git -C " + tmp.path + " rev-parse 2>/dev/null").c_str()) != 0,
                        tmp.path << " is inside a git repository: set TMPDIR elsewhere");
  std::string hex;
  BOOST_TEST((ReadHeadFile(tmp.path, &hex) == HeadFile::kNone));
  BOOST_TEST(hex.empty());
}

}  // namespace
}  // namespace guard
