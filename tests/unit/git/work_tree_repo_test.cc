// WorkTreeRepo::Open outside any repository answers kNotFound without
// initialising libgit2 (whose TLS backend loads the system's CA
// certificates at its global init: a few ms of every session's start and
// end), and inside one, at any depth, opens it as before.
#define BOOST_TEST_MODULE work_tree_repo
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

#include "supervisor/git/work_tree_repo.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(OutsideAnyRepositoryLibgit2IsNotEvenInitialised) {
  testing::TempDir tmp;
  const std::string root = tmp.path + "/plain/deeper";
  BOOST_REQUIRE(std::system(("mkdir -p " + root).c_str()) == 0);
  // The test needs a temporary directory that no git repository holds.
  BOOST_REQUIRE_MESSAGE(std::system(("git -C " + root + " rev-parse 2>/dev/null").c_str()) != 0,
                        tmp.path << " is inside a git repository: set TMPDIR elsewhere");
  WorkTreeRepo repo;
  BOOST_TEST(WorkTreeRepo::Open(root, tmp.path + "/state", &repo).IsNotFound());
  // The first initialisation of this process: Open did not make one.
  BOOST_TEST(git_libgit2_init() == 1);
  git_libgit2_shutdown();
}

BOOST_AUTO_TEST_CASE(InsideARepositoryAtAnyDepthItIsFound) {
  testing::TempDir tmp;
  const std::string root = tmp.path + "/repo/a/b";
  BOOST_REQUIRE(std::system(("mkdir -p " + root + " && git init -q " + tmp.path + "/repo").c_str()) == 0);
  WorkTreeRepo repo;
  Status s = WorkTreeRepo::Open(root, tmp.path + "/state", &repo);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(repo.work_tree() == tmp.path + "/repo");
  std::string path;
  BOOST_TEST(repo.RepoPath("f.txt", &path));
  BOOST_TEST(path == "a/b/f.txt");
}

}  // namespace
}  // namespace guard
