// supervisor/base/tree_walk.h: the one walk below a directory and the one
// way to open a directory beneath another, neither ever through a symlink.
#define BOOST_TEST_MODULE tree_walk
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "supervisor/base/tree_walk.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

struct Tree {
  Tree() {
    BOOST_REQUIRE(OpenFile(path, O_RDONLY | O_DIRECTORY, 0, &fd).ok());
  }
  void Mkdir(const std::string& rel) const { BOOST_REQUIRE(::mkdir((path + "/" + rel).c_str(), 0755) == 0); }
  void File(const std::string& rel) const { BOOST_REQUIRE(WriteFileAtomic(path + "/" + rel, "x", 0644).ok()); }
  void Symlink(const std::string& target, const std::string& rel) const {
    BOOST_REQUIRE(::symlink(target.c_str(), (path + "/" + rel).c_str()) == 0);
  }

  testing::TempDir tmp{"guard-tree-walk"};
  const std::string& path = tmp.path;
  UniqueFd fd;
};

std::vector<std::string> Walk(const Tree& t, const std::string& top, const TreeWalkOptions& options = {}) {
  std::vector<std::string> seen;
  Status s = WalkTree(t.fd.get(), top, options, [&](const TreeEntry& e) {
    seen.push_back(e.rel + (S_ISDIR(e.st.st_mode) ? "/" : "") + "@" + std::to_string(e.depth));
  });
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return seen;
}

BOOST_FIXTURE_TEST_CASE(ChildrenComeBeforeTheirDirectoryNamesInByteOrder, Tree) {
  Mkdir("b");
  File("b/y");
  File("b/x");
  File("a");
  Mkdir("b/c");
  File("b/c/z");
  const std::vector<std::string> want = {"a@0", "b/c/z@2", "b/c/@1", "b/x@1", "b/y@1", "b/@0"};
  BOOST_TEST(Walk(*this, ".") == want, boost::test_tools::per_element());
  const std::vector<std::string> named = {"top/a@0", "top/b/c/z@2", "top/b/c/@1", "top/b/x@1", "top/b/y@1",
                                          "top/b/@0"};
  BOOST_TEST(Walk(*this, "top") == named, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(ASymlinkToADirectoryIsMetButNeverEntered, Tree) {
  Mkdir("d");
  File("d/f");
  Symlink("d", "link");
  Symlink("/", "root");
  const std::vector<std::string> want = {"d/f@1", "d/@0", "link@0", "root@0"};
  BOOST_TEST(Walk(*this, "") == want, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(DescendChoosesTheDirectoriesWalkedInto, Tree) {
  Mkdir("keep");
  File("keep/f");
  Mkdir("skip");
  File("skip/f");
  TreeWalkOptions options;
  options.descend = [](const TreeEntry& e) { return e.rel != "skip"; };
  const std::vector<std::string> want = {"keep/f@1", "keep/@0", "skip/@0"};
  BOOST_TEST(Walk(*this, ".", options) == want, boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(OpenDirBeneathNeverFollowsASymlink, Tree) {
  Mkdir("a");
  Mkdir("a/b");
  File("a/f");
  Symlink("a", "link");
  Symlink("b", "a/blink");
  UniqueFd dir;
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/b", O_RDONLY, &dir).ok());
  BOOST_TEST(OpenDirBeneath(fd.get(), ".", O_RDONLY, &dir).ok());
  BOOST_TEST(OpenDirBeneath(fd.get(), "link/b", O_RDONLY, &dir).err() == ELOOP);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/blink", O_RDONLY, &dir).err() == ELOOP);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/blink", O_PATH, &dir).err() == ELOOP);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/f", O_RDONLY, &dir).err() == ENOTDIR);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/f/x", O_PATH, &dir).err() == ENOTDIR);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/none", O_RDONLY, &dir).err() == ENOENT);
  BOOST_TEST(OpenDirBeneath(fd.get(), "a/../a", O_RDONLY, &dir).err() == EINVAL);
  BOOST_TEST(OpenDirBeneath(fd.get(), path, O_RDONLY, &dir).err() == EINVAL);
}

BOOST_AUTO_TEST_CASE(PlainRelativePathsHaveOnlyRealNames) {
  for (const char* ok : {".", "a", "a/b", "a b/\xff"}) BOOST_TEST(IsPlainRelative(ok), ok);
  for (const char* bad : {"", "/a", "a/", "a//b", "./a", "a/.", "a/..", "..", "/"}) {
    BOOST_TEST(!IsPlainRelative(bad), bad);
  }
  BOOST_TEST(!IsPlainRelative(std::string("a\0b", 3)));
}

}  // namespace
}  // namespace guard
