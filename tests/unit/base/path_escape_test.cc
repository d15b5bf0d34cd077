#define BOOST_TEST_MODULE path_escape
#include <boost/test/unit_test.hpp>

#include "supervisor/base/path_args.h"
#include "supervisor/base/path_escape.h"

namespace guard {
namespace {

BOOST_AUTO_TEST_CASE(TerminalEscapingKeepsPrintableUtf8AndEscapesTheRest) {
  BOOST_TEST(EscapeForTerminal("plain/path.txt") == "plain/path.txt");
  BOOST_TEST(EscapeForTerminal("caf\xc3\xa9") == "caf\xc3\xa9");
  BOOST_TEST(EscapeForTerminal("new\nline") == "new\\x0aline");
  BOOST_TEST(EscapeForTerminal("esc\x1b[31m") == "esc\\x1b[31m");
  BOOST_TEST(EscapeForTerminal("bad\xff") == "bad\\xff");
  BOOST_TEST(EscapeForTerminal("back\\slash") == "back\\\\slash");
  BOOST_TEST(EscapeForTerminal("c1\xc2\x9b") == "c1\\xc2\\x9b");  // CSI in its C1 form
  BOOST_TEST(EscapeForTerminal(std::string("nul\0x", 5)) == "nul\\x00x");
  BOOST_TEST(EscapeForTerminal("overlong\xc0\xaf") == "overlong\\xc0\\xaf");
}

BOOST_AUTO_TEST_CASE(GitQuotingMatchesCoreQuotepath) {
  BOOST_TEST(QuoteLikeGit("a b.txt") == "a b.txt");
  BOOST_TEST(QuoteLikeGit("tab\there") == "\"tab\\there\"");
  BOOST_TEST(QuoteLikeGit("caf\xc3\xa9") == "\"caf\\303\\251\"");
  BOOST_TEST(QuoteLikeGit("q\"uote") == "\"q\\\"uote\"");
  BOOST_TEST(QuoteLikeGit("nl\n") == "\"nl\\n\"");
}

BOOST_AUTO_TEST_CASE(Utf8CheckRejectsMalformedSequences) {
  auto valid = [](std::string_view s) {
    bool lossy = true;
    Utf8OrEscaped(s, &lossy);
    return !lossy;
  };
  BOOST_TEST(valid("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  BOOST_TEST(!valid("\xc3"));
  BOOST_TEST(!valid("\xed\xa0\x80"));      // a surrogate
  BOOST_TEST(!valid("\xc0\x80"));          // overlong NUL
  BOOST_TEST(!valid("\xf4\x90\x80\x80"));  // above U+10FFFF
}

BOOST_AUTO_TEST_CASE(JsonTextEscapesOnlyTheBadBytes) {
  bool lossy = true;
  BOOST_TEST(Utf8OrEscaped("caf\xc3\xa9", &lossy) == "caf\xc3\xa9");
  BOOST_TEST(!lossy);
  BOOST_TEST(Utf8OrEscaped("a\xff" "b\xc3\xa9", &lossy) == "a\\xffb\xc3\xa9");
  BOOST_TEST(lossy);
  BOOST_TEST(HexBytes("a\xff") == "61ff");
}

BOOST_AUTO_TEST_CASE(CommandLinePathsMapToRootRelativeNames) {
  std::string rel;
  BOOST_REQUIRE(ToRootRelative("/r", "/r/src", "a.c", &rel).ok());
  BOOST_TEST(rel == "src/a.c");
  BOOST_REQUIRE(ToRootRelative("/r", "/r/src", "../doc/./x", &rel).ok());
  BOOST_TEST(rel == "doc/x");
  BOOST_REQUIRE(ToRootRelative("/r", "/r/src", "..", &rel).ok());
  BOOST_TEST(rel == ".");
  BOOST_REQUIRE(ToRootRelative("/r", "/elsewhere", "/r/x/", &rel).ok());
  BOOST_TEST(rel == "x");
  BOOST_TEST((ToRootRelative("/r", "/r", "../rr/x", &rel).code() == Status::Code::kInvalidArgument));
  BOOST_TEST((ToRootRelative("/r", "/r", "/etc/passwd", &rel).code() == Status::Code::kInvalidArgument));
  BOOST_REQUIRE(ToRootRelative("/", "/home", "x", &rel).ok());
  BOOST_TEST(rel == "home/x");
}

}  // namespace
}  // namespace guard
