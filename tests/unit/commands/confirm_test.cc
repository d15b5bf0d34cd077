// The question undo, replay and commit ask: only an explicit yes is a yes.
#define BOOST_TEST_MODULE confirm
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <sstream>
#include <string>

#include "supervisor/commands/confirm.h"

namespace guard {
namespace {

// Confirm's answer to `typed`, with what it printed in `*asked`.
bool Answer(const std::string& typed, std::string* asked = nullptr) {
  std::istringstream in(typed);
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  BOOST_REQUIRE(out != nullptr);
  bool yes = Confirm("Apply this undo?", in, out);
  std::fclose(out);
  if (asked != nullptr) *asked = std::string(buf, size);
  std::free(buf);
  return yes;
}

BOOST_AUTO_TEST_CASE(OnlyAnExplicitYesIsAYes) {
  BOOST_TEST(Answer("y\n"));
  BOOST_TEST(Answer("Y\n"));
  BOOST_TEST(Answer("yes\n"));
  BOOST_TEST(Answer("yes"));  // the last line needs no newline
  BOOST_TEST(!Answer("n\n"));
  BOOST_TEST(!Answer("\n"));
  BOOST_TEST(!Answer("YES\n"));
  BOOST_TEST(!Answer(" y\n"));
  BOOST_TEST(!Answer("yes please\n"));
}

BOOST_AUTO_TEST_CASE(EndOfInputIsANo) { BOOST_TEST(!Answer("")); }

BOOST_AUTO_TEST_CASE(TheQuestionEndsWithTheDefault) {
  std::string asked;
  (void)Answer("n\n", &asked);
  BOOST_TEST(asked == "Apply this undo? [y/N] ");
}

BOOST_AUTO_TEST_CASE(OnlyTheFirstLineIsRead) {
  std::istringstream in("n\ny\n");
  std::FILE* out = std::fopen("/dev/null", "we");
  BOOST_REQUIRE(out != nullptr);
  BOOST_TEST(!Confirm("first?", in, out));
  BOOST_TEST(Confirm("second?", in, out));
  std::fclose(out);
}

}  // namespace
}  // namespace guard
