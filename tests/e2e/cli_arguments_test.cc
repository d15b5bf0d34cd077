// Every number and id the command line takes is parsed with bounds: no
// argument makes guard abort. A property over a table of hostile values
// (numbers past every integer type, signs, empty strings, format specifiers,
// control bytes, a very long word) in every option that takes a number, a
// mark or a session, on a session that has a mark: guard ends by itself
// (no signal), with an exit status below 126, says nothing of an internal
// error, and refuses what it refuses in words on stderr.
#define BOOST_TEST_MODULE cli_arguments
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

const std::vector<std::string> kValues = {
    "99999999999999999999", "18446744073709551616", "18446744073709551615", "-1", "0", "+1", "1e9", "0x10",
    "", " ", "@", "@-1", "@0", "@99999999999999999999", "@18446744073709551616", "last~99999999999999999999",
    "last~-1", "last~", "%s%n%x", "\x01\x7f\xff", std::string(5000, '9'), "@" + std::string(5000, '9'),
};

// The options that take a number, a mark or a session, each with the words
// that make it harmless to try (a dry run, a session that exists).
const std::vector<std::vector<std::string>> kOptions = {
    {"undo", "--dry-run", "--to"}, {"undo", "--dry-run", "--turns"}, {"replay", "--dry-run", "--to"},
    {"undo", "--dry-run", "--session"}, {"diff", "--to"}, {"diff", "--session"}, {"export", "--to"},
    {"export", "--session"}, {"show", "--session"}, {"checkpoint", "--at"}, {"checkpoint", "--session"},
    {"status", "--session"}, {"gc", "--dry-run", "--keep"}, {"gc", "--dry-run", "--keep-newest"},
    {"gc", "--dry-run", "--max-size"}, {"forget", "--dry-run"},
};

BOOST_AUTO_TEST_CASE(NoArgumentMakesGuardAbort) {
  Workspace ws;
  GuardResult session = RunGuardBash(ws, "echo a > a\n'" + GuardBinary() + "' mark one\necho b > b\n");
  BOOST_REQUIRE_MESSAGE(session.exit_code == 0, DescribeResult(session));
  int refused = 0;
  for (const std::vector<std::string>& option : kOptions) {
    for (const std::string& value : kValues) {
      std::vector<std::string> args = option;
      args.push_back(value);
      GuardCommand command;
      command.args = args;
      command.timeout_seconds = 30;
      GuardResult r = RunGuardCommand(ws, command);
      const std::string what = option.front() + " " + option.back() + " '" + value.substr(0, 40) + "'";
      BOOST_TEST_CONTEXT(what) {
        BOOST_TEST(!r.timed_out);
        BOOST_TEST(r.exit_code >= 0);
        BOOST_TEST(r.exit_code < 126, DescribeResult(r));  // 128+N: killed by signal N (SIGABRT: 134)
        BOOST_TEST(r.err.find("terminate called") == std::string::npos, r.err);
        BOOST_TEST(r.err.find("internal error") == std::string::npos, r.err);
        if (r.exit_code != 0) {
          ++refused;
          BOOST_TEST(!r.err.empty(), "a refusal says why");
        }
      }
    }
  }
  BOOST_TEST(refused > 0);
  // The case that aborted: a mark number past every integer type.
  GuardResult r = RunGuardCommand(ws, {"undo", "--dry-run", "--to", "@99999999999999999999"});
  BOOST_TEST(r.exit_code == 2, DescribeResult(r));
  BOOST_TEST(r.err.rfind("guard: ", 0) == 0, r.err);
  BOOST_TEST(r.err.find("the session has marks @1 to @1") != std::string::npos, r.err);
}

}  // namespace
}  // namespace guard::e2e
