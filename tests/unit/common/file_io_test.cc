// common/file_io.h: the helpers every layer uses to read and write files.
#define BOOST_TEST_MODULE file_io
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/file_io.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {
namespace {

using Dir = testing::TempDir;

BOOST_FIXTURE_TEST_CASE(ReadLinkAtGivesTheTargetBytesAsTheyAre, Dir) {
  const std::string target = "../a\nb\xff/c";
  BOOST_REQUIRE(::symlink(target.c_str(), (path + "/l").c_str()) == 0);
  UniqueFd dir;
  BOOST_REQUIRE(OpenFile(path, O_RDONLY | O_DIRECTORY, 0, &dir).ok());
  std::string got;
  BOOST_TEST(ReadLinkAt(dir.get(), "l", "l", &got).ok());
  BOOST_TEST(got == target);
  got.clear();
  BOOST_TEST(ReadLinkAt(AT_FDCWD, path + "/l", "l", &got).ok());
  BOOST_TEST(got == target);
  BOOST_REQUIRE(WriteFileAtomic(path + "/f", "x", 0644).ok());
  Status s = ReadLinkAt(dir.get(), "f", "what", &got);
  BOOST_TEST(s.err() == EINVAL);
  BOOST_TEST(s.ToString().find("what") != std::string::npos, s.ToString());
}

}  // namespace
}  // namespace guard
