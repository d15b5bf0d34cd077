// WalkDirectory (supervisor/trace/directory_walk.h): a directory path
// resolved by the kernel in one call, taken only where guard's resolution
// and the tracee's agree.
#define BOOST_TEST_MODULE directory_walk
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>

#include "supervisor/trace/directory_walk.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::TempDir;

// T/a/b/  T/up -> a  T/abs -> T/a/b  T/selfcwd -> /proc/self/cwd  T/file
struct Tree {
  TempDir tmp;
  std::string t = std::filesystem::canonical(tmp.path).string();
  Tree() {
    BOOST_REQUIRE(mkdir((t + "/a").c_str(), 0755) == 0);
    BOOST_REQUIRE(mkdir((t + "/a/b").c_str(), 0755) == 0);
    BOOST_REQUIRE(symlink("a", (t + "/up").c_str()) == 0);
    BOOST_REQUIRE(symlink((t + "/a/b").c_str(), (t + "/abs").c_str()) == 0);
    BOOST_REQUIRE(symlink("/proc/self/cwd", (t + "/selfcwd").c_str()) == 0);
    int fd = open((t + "/file").c_str(), O_WRONLY | O_CREAT, 0644);
    BOOST_REQUIRE(fd >= 0);
    close(fd);
  }
};

std::string Walk(const std::string& dir, bool* ok) {
  UniqueFd fd;
  std::string name;
  *ok = WalkDirectory(dir, &fd, &name);
  if (*ok) {
    struct stat by_fd, by_name;
    BOOST_TEST(fstat(fd.get(), &by_fd) == 0);
    BOOST_TEST(stat(name.c_str(), &by_name) == 0);
    BOOST_TEST((by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino), dir << " -> " << name);
  }
  return name;
}

BOOST_AUTO_TEST_CASE(LexicalNormalFoldsDotsAndSlashes) {
  BOOST_TEST(LexicallyNormal("/") == "/");
  BOOST_TEST(LexicallyNormal("/a//b/./c/") == "/a/b/c");
  BOOST_TEST(LexicallyNormal("/a/b/../c") == "/a/c");
  BOOST_TEST(LexicallyNormal("/../a/..") == "/");
}

BOOST_AUTO_TEST_CASE(APathWithoutSymlinksIsItsOwnCanonicalName) {
  Tree tree;
  bool ok = false;
  BOOST_TEST(Walk(tree.t + "/a/./b/", &ok) == tree.t + "/a/b");
  BOOST_TEST(ok);
  BOOST_TEST(Walk(tree.t + "/a/b/..", &ok) == tree.t + "/a");
  BOOST_TEST(ok);
}

BOOST_AUTO_TEST_CASE(SymlinksOnTheWayGiveTheNameTheKernelReached) {
  Tree tree;
  bool ok = false;
  BOOST_TEST(Walk(tree.t + "/up/b", &ok) == tree.t + "/a/b");
  BOOST_TEST(ok);
  BOOST_TEST(Walk(tree.t + "/abs", &ok) == tree.t + "/a/b");
  BOOST_TEST(ok);
  // `..` after a symlink is taken from where it led, not lexically.
  BOOST_TEST(Walk(tree.t + "/abs/..", &ok) == tree.t + "/a");
  BOOST_TEST(ok);
}

// /proc/self is guard's when guard walks it: never taken.
BOOST_AUTO_TEST_CASE(ProcSelfAndMagicLinksAreLeftToTheCaller) {
  Tree tree;
  bool ok = true;
  Walk(tree.t + "/selfcwd", &ok);
  BOOST_TEST(!ok);
  Walk("/proc/self/cwd", &ok);
  BOOST_TEST(!ok);
  Walk("/proc/self/fd", &ok);
  BOOST_TEST(!ok);
  Walk("/dev/fd", &ok);  // -> /proc/self/fd
  BOOST_TEST(!ok);
}

BOOST_AUTO_TEST_CASE(WhatIsNoDirectoryIsLeftToTheCaller) {
  Tree tree;
  bool ok = true;
  Walk(tree.t + "/file", &ok);
  BOOST_TEST(!ok);
  Walk(tree.t + "/missing/x", &ok);
  BOOST_TEST(!ok);
  Walk("relative/path", &ok);
  BOOST_TEST(!ok);
}

}  // namespace
}  // namespace guard
