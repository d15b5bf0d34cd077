// fopen's mode strings as glibc reads them (interpose/stdio_mode.h): the
// open flags, the mode fdopen is given, and the modes left to glibc.
#define BOOST_TEST_MODULE stdio_mode
#include <boost/test/unit_test.hpp>

#include <fcntl.h>

#include <string>

#include "interpose/stdio_mode.h"

namespace {

shim_stdio_mode Parse(const char* mode) {
  shim_stdio_mode m;
  BOOST_REQUIRE_MESSAGE(shim_stdio_mode_parse(mode, &m) == 1, mode);
  return m;
}

BOOST_AUTO_TEST_CASE(EachBaseModeGivesGlibcsOpenFlags) {
  BOOST_TEST(Parse("r").flags == O_RDONLY);
  BOOST_TEST(Parse("w").flags == (O_WRONLY | O_CREAT | O_TRUNC));
  BOOST_TEST(Parse("a").flags == (O_WRONLY | O_CREAT | O_APPEND));
  BOOST_TEST(Parse("r+").flags == O_RDWR);
  BOOST_TEST(Parse("w+").flags == (O_RDWR | O_CREAT | O_TRUNC));
  BOOST_TEST(Parse("a+").flags == (O_RDWR | O_CREAT | O_APPEND));
}

BOOST_AUTO_TEST_CASE(ModifiersAddTheirFlagsInAnyOrder) {
  BOOST_TEST(Parse("wx").flags == (O_WRONLY | O_CREAT | O_TRUNC | O_EXCL));
  BOOST_TEST(Parse("rb+").flags == O_RDWR);  // '+' after 'b', as glibc allows
  shim_stdio_mode m = Parse("wbxe+");
  BOOST_TEST(m.flags == (O_RDWR | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC));
  BOOST_TEST(m.cloexec == 1);
  BOOST_TEST(std::string(m.fdopen_mode) == "w+");
  BOOST_TEST(Parse("rm").mmap == 1);
  BOOST_TEST(Parse("wq").flags == (O_WRONLY | O_CREAT | O_TRUNC));  // unknown characters are ignored
}

BOOST_AUTO_TEST_CASE(GlibcLooksAtSixCharactersAfterTheFirstAndStopsAtAComma) {
  BOOST_TEST(Parse("rbbbbbb+").flags == O_RDONLY);  // the '+' is the eighth character
  BOOST_TEST(Parse("rbbbbb+").flags == O_RDWR);     // the seventh: read
  BOOST_TEST(Parse("w,x").flags == (O_WRONLY | O_CREAT | O_TRUNC));
}

BOOST_AUTO_TEST_CASE(FdopenGetsTheCanonicalMode) {
  BOOST_TEST(std::string(Parse("r").fdopen_mode) == "r");
  BOOST_TEST(std::string(Parse("ab+e").fdopen_mode) == "a+");
  BOOST_TEST(std::string(Parse("wex").fdopen_mode) == "w");
}

BOOST_AUTO_TEST_CASE(OnlyAppendWithoutPlusSeeksToTheEnd) {
  BOOST_TEST(Parse("a").seek_end == 1);
  BOOST_TEST(Parse("ab").seek_end == 1);
  BOOST_TEST(Parse("a+").seek_end == 0);
  BOOST_TEST(Parse("w").seek_end == 0);
}

BOOST_AUTO_TEST_CASE(WideAndNoCancelModesAreLeftToGlibc) {
  BOOST_TEST(Parse("w,ccs=UTF-8").real_only == 1);
  BOOST_TEST(Parse("a+,ccs=UTF-8").real_only == 1);
  BOOST_TEST(Parse("wc").real_only == 1);
  BOOST_TEST(Parse("w").real_only == 0);
}

BOOST_AUTO_TEST_CASE(ABadFirstCharacterIsRefused) {
  shim_stdio_mode m;
  BOOST_TEST(shim_stdio_mode_parse("", &m) == 0);
  BOOST_TEST(shim_stdio_mode_parse("x", &m) == 0);
  BOOST_TEST(shim_stdio_mode_parse("+r", &m) == 0);
}

BOOST_AUTO_TEST_CASE(ReadOnlyIsTheModeThatChangesNothing) {
  for (const char* mode : {"r", "rbe", "rm"}) {
    shim_stdio_mode m = Parse(mode);
    BOOST_TEST(shim_stdio_mode_reads_only(&m) == 1, mode);
  }
  for (const char* mode : {"r+", "w", "a", "wx"}) {
    shim_stdio_mode m = Parse(mode);
    BOOST_TEST(shim_stdio_mode_reads_only(&m) == 0, mode);
  }
}

}  // namespace
