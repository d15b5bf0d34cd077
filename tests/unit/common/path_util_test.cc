// common/path_util.h: the lexical path relations every layer shares.
#define BOOST_TEST_MODULE path_util
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "common/path_util.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(UnderComparesWholeComponents) {
  BOOST_TEST(PathIsUnder("/a/b", "/a/b"));
  BOOST_TEST(PathIsUnder("/a/b/c", "/a/b"));
  BOOST_TEST(!PathIsUnder("/a/bc", "/a/b"));
  BOOST_TEST(!PathIsUnder("/a", "/a/b"));
  BOOST_TEST(PathIsUnder("a/b", "a"));
  BOOST_TEST(!PathIsUnder("ab", "a"));
}

BOOST_AUTO_TEST_CASE(SlashAndDotAreTheParentsOfTheirKind) {
  BOOST_TEST(PathIsUnder("/", "/"));
  BOOST_TEST(PathIsUnder("/etc/passwd", "/"));
  BOOST_TEST(!PathIsUnder("etc", "/"));
  BOOST_TEST(PathIsUnder(".", "."));
  BOOST_TEST(PathIsUnder("a/b", "."));
  BOOST_TEST(!PathIsUnder("/a", "."));
  BOOST_TEST(!PathIsUnder("", "."));
}

BOOST_AUTO_TEST_CASE(StrictlyUnderLeavesOutTheDirectoryItself) {
  BOOST_TEST(!PathIsStrictlyUnder("a", "a"));
  BOOST_TEST(PathIsStrictlyUnder("a/x", "a"));
  BOOST_TEST(!PathIsStrictlyUnder(".", "."));
  BOOST_TEST(PathIsStrictlyUnder("a", "."));
  BOOST_TEST(!PathIsStrictlyUnder("/", "/"));
  BOOST_TEST(PathIsStrictlyUnder("/a", "/"));
}

BOOST_AUTO_TEST_CASE(RelativeAndJoinAreInverses) {
  BOOST_TEST(PathRelativeTo("/r", "/r") == ".");
  BOOST_TEST(PathRelativeTo("/r/a/b", "/r") == "a/b");
  BOOST_TEST(PathRelativeTo("/a/b", "/") == "a/b");
  BOOST_TEST(PathRelativeTo("/", "/") == ".");
  BOOST_TEST(PathRelativeTo("a/b", "a") == "b");
  BOOST_TEST(PathRelativeTo("a/b", ".") == "a/b");
  BOOST_TEST(PathJoin("/r", ".") == "/r");
  BOOST_TEST(PathJoin("/r", "a/b") == "/r/a/b");
  BOOST_TEST(PathJoin("/", "a") == "/a");
  BOOST_TEST(PathJoin(".", "a") == "a");
  for (const char* dir : {"/", "/r", "/r/s"}) {
    for (const char* rel : {".", "a", "a/b\xff"}) {
      BOOST_TEST(PathRelativeTo(PathJoin(dir, rel), dir) == rel);
    }
  }
}

BOOST_AUTO_TEST_CASE(ParentDirOfABareNameIsDot) {
  BOOST_TEST(ParentDir("/a/b") == "/a");
  BOOST_TEST(ParentDir("/a") == "/");
  BOOST_TEST(ParentDir("/") == "/");
  BOOST_TEST(ParentDir("a/b") == "a");
  BOOST_TEST(ParentDir("a") == ".");
  // A trailing slash names the directory itself, whose parent is not asked.
  BOOST_TEST(ParentDir("a/b/") == "a/b");
  BOOST_TEST(ParentDir("/x\xff/y") == "/x\xff");  // bytes, not characters
}

// Every directory ForEachAncestor visits above `path`, in its order.
std::vector<std::string> Ancestors(const std::string& path) {
  std::vector<std::string> seen;
  BOOST_TEST(!ForEachAncestor(path, [&](const std::string& a) {
    seen.push_back(a);
    return false;
  }));
  return seen;
}

using Names = std::vector<std::string>;

BOOST_AUTO_TEST_CASE(AncestorsComeDeepestFirstWithoutTheRoot) {
  BOOST_TEST(Ancestors("a/b/c") == (Names{"a/b", "a"}), boost::test_tools::per_element());
  BOOST_TEST(Ancestors("/a/b/c") == (Names{"/a/b", "/a"}), boost::test_tools::per_element());
  BOOST_TEST(Ancestors("dir with space/x") == (Names{"dir with space"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ANameInTheRootHasNoAncestor) {
  for (const char* path : {"a", "/a", ".", "/", ""}) {
    BOOST_TEST_CONTEXT(path) { BOOST_TEST(Ancestors(path).empty()); }
  }
}

BOOST_AUTO_TEST_CASE(AVisitThatAnswersTrueStopsTheWalk) {
  Names seen;
  bool stopped = ForEachAncestor("a/b/c/d", [&](const std::string& a) {
    seen.push_back(a);
    return a == "a/b";
  });
  BOOST_TEST(stopped);
  BOOST_TEST(seen == (Names{"a/b/c", "a/b"}), boost::test_tools::per_element());
}

}  // namespace
}  // namespace guard
