// ExpandCorePattern (supervisor/trace/core_dump.h): the name a core dump
// gets, expanded as the kernel's format_corename does for a file pattern.
#define BOOST_TEST_MODULE core_dump
#include <boost/test/unit_test.hpp>

#include <string>

#include "supervisor/trace/core_dump.h"

namespace guard {
namespace {

DyingProcess Dying() {
  DyingProcess p;
  p.pid = 7, p.tid = 8, p.global_pid = 1007, p.global_tid = 1008;
  p.uid = 1000, p.gid = 100, p.sig = 11, p.core_limit = 4096;
  p.comm = "a/b";  // a thread may name itself with a slash
  p.exe = "/usr/bin/tool";
  p.hostname = "box";
  return p;
}

std::string Expand(const std::string& pattern, bool uses_pid = false) {
  std::string out;
  Status why;
  BOOST_TEST_REQUIRE(ExpandCorePattern(pattern, uses_pid, Dying(), &out, &why), why.ToString());
  return out;
}

BOOST_AUTO_TEST_CASE(APlainNameIsItself) {
  BOOST_TEST(Expand("core") == "core");
  BOOST_TEST(Expand("/var/crash/core") == "/var/crash/core");
}

BOOST_AUTO_TEST_CASE(CoreUsesPidAppendsThePidUnlessThePatternHasIt) {
  BOOST_TEST(Expand("core", true) == "core.7");
  BOOST_TEST(Expand("core-%p", true) == "core-7");
  BOOST_TEST(Expand("core-%P", true) == "core-1007.7");
}

BOOST_AUTO_TEST_CASE(SpecifiersExpandAndNamesHaveTheirSlashesEscaped) {
  BOOST_TEST(Expand("%p.%P.%i.%I.%u.%g.%s.%c") == "7.1007.8.1008.1000.100.11.4096");
  BOOST_TEST(Expand("core.%e") == "core.a!b");
  BOOST_TEST(Expand("%E") == "!usr!bin!tool");
  BOOST_TEST(Expand("%f@%h") == "tool@box");
  BOOST_TEST(Expand("100%%") == "100%");
}

BOOST_AUTO_TEST_CASE(AnUnknownSpecifierIsDroppedAsTheKernelDropsIt) {
  BOOST_TEST(Expand("core%z.x") == "core.x");
  BOOST_TEST(Expand("core%") == "core");
}

BOOST_AUTO_TEST_CASE(TheTimeOfTheDumpCannotBePredicted) {
  for (const char* pattern : {"core.%t", "core.%d"}) {
    std::string out;
    Status why;
    BOOST_TEST(!ExpandCorePattern(pattern, false, Dying(), &out, &why), pattern);
    BOOST_TEST(!why.ok());
  }
}

}  // namespace
}  // namespace guard
