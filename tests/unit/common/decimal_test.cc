#define BOOST_TEST_MODULE decimal
#include "common/decimal.h"

#include <cstdint>
#include <string>

#include <boost/test/unit_test.hpp>

namespace guard {
namespace {

struct Row {
  const char* text;
  uint64_t max;
  bool ok;
  uint64_t value;
};

const Row kRows[] = {
    {"0", 10, true, 0},
    {"7", 10, true, 7},
    {"10", 10, true, 10},
    {"11", 10, false, 0},
    {"5", 4, false, 0},
    {"1", 0, false, 0},
    {"0", 0, true, 0},
    {"007", 10, true, 7},
    {"", 10, false, 0},
    {"-1", 10, false, 0},
    {"+1", 10, false, 0},
    {" 1", 10, false, 0},
    {"1 ", 10, false, 0},
    {"1a", 10, false, 0},
    {"0x10", 100, false, 0},
    {"18446744073709551615", UINT64_MAX, true, UINT64_MAX},
    {"18446744073709551616", UINT64_MAX, false, 0},
    {"99999999999999999999", UINT64_MAX, false, 0},
    {"99999999999999999999", 3, false, 0},
    {"000000000000000000000000000000000000000042", 100, true, 42},
};

BOOST_AUTO_TEST_CASE(NumbersAreParsedWithinTheirBoundsAndNothingElseIs) {
  for (const Row& row : kRows) {
    BOOST_TEST_CONTEXT(std::string("\"") + row.text + "\" max " + std::to_string(row.max)) {
      uint64_t out = 12345;
      BOOST_TEST(ParseDecimal(row.text, row.max, &out) == row.ok);
      BOOST_TEST(out == (row.ok ? row.value : 12345u));
    }
  }
}

}  // namespace
}  // namespace guard
