// The mkstemp family's names (interpose/temp_name.h): where the six X's
// are, what refuses a template, and what the attempts write over them.
#define BOOST_TEST_MODULE temp_name
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <set>
#include <string>

#include "interpose/temp_name.h"

namespace {

BOOST_AUTO_TEST_CASE(TheSixXsBeforeTheSuffixAreFound) {
  char plain[] = "dir/tmpXXXXXX";
  BOOST_TEST(shim_temp_xs(plain, 0) == plain + 7);
  char suffixed[] = "tmpXXXXXX.c";
  BOOST_TEST(shim_temp_xs(suffixed, 2) == suffixed + 3);
  char more[] = "XXXXXXXX";  // more X's than six: the last six
  BOOST_TEST(shim_temp_xs(more, 0) == more + 2);
  char exact[] = "XXXXXX";
  BOOST_TEST(shim_temp_xs(exact, 0) == exact);
}

BOOST_AUTO_TEST_CASE(ATemplateWithoutSixXsIsRefused) {
  char five[] = "tmpXXXXX";
  BOOST_TEST(shim_temp_xs(five, 0) == nullptr);
  char short_for_suffix[] = "XXXXXX.c";
  BOOST_TEST(shim_temp_xs(short_for_suffix, 3) == nullptr);
  char interrupted[] = "tmpXXXaXXX";
  BOOST_TEST(shim_temp_xs(interrupted, 0) == nullptr);
  char ok[] = "tmpXXXXXX";
  BOOST_TEST(shim_temp_xs(ok, -1) == nullptr);
  BOOST_TEST(std::string(five) == "tmpXXXXX");  // untouched
}

BOOST_AUTO_TEST_CASE(AttemptsWriteSixLettersOrDigitsAndDiffer) {
  char templ[] = "tmpXXXXXX.c";
  char* xs = shim_temp_xs(templ, 2);
  BOOST_REQUIRE(xs != nullptr);
  uint64_t state = 12345;
  std::set<std::string> names;
  for (int i = 0; i < 1000; ++i) {
    shim_temp_fill(xs, &state);
    for (int j = 0; j < SHIM_TEMP_XS; ++j) {
      BOOST_TEST(std::strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", xs[j]) != nullptr);
    }
    BOOST_TEST(std::string(templ, 3) == "tmp");
    BOOST_TEST(std::string(templ + 9) == ".c");
    names.insert(templ);
  }
  BOOST_TEST(names.size() == 1000u);
}

}  // namespace
