// A command that cannot be started ends its session like any other
// (docs/capture.md): the session is sealed, its meta says finished with the
// shell's exit code (127 for a missing program, 126 for one that cannot be
// run), and guard prints one line: why, and nothing else.
#define BOOST_TEST_MODULE launch_failure
#include <boost/test/unit_test.hpp>

#include "common/session_meta.h"
#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

GuardResult RunLoud(const Workspace& ws, const std::vector<std::string>& command) {
  GuardRun run;
  run.command = command;
  run.quiet = false;
  return RunGuard(ws, run);
}

void ExpectSealedAs(const Workspace& ws, const GuardResult& r, int code) {
  SessionView s = OnlyNewSession(ws, r);
  BOOST_TEST(SessionStateName(s.meta().state) == std::string("finished"));
  BOOST_TEST(s.meta().exit_code == code);
  BOOST_TEST(s.meta().ended_ns != 0);
  BOOST_REQUIRE(!s.records().empty());
  BOOST_TEST((s.records().back().kind == OpKind::kSessionEnd), "the journal does not end with kSessionEnd");
  BOOST_TEST(SessionStateOf(ws, s.meta().id) == "finished");
}

BOOST_AUTO_TEST_CASE(AMissingProgramSealsTheSessionAndExits127WithOneLine) {
  Workspace ws;
  GuardResult r = RunLoud(ws, {"/nonexistent-command"});
  BOOST_TEST(r.exit_code == 127, DescribeResult(r));
  BOOST_TEST(Lines(r.err).size() == 1u, DescribeResult(r));
  BOOST_TEST(Contains(r.err, "/nonexistent-command"), DescribeResult(r));
  ExpectSealedAs(ws, r, 127);
}

BOOST_AUTO_TEST_CASE(AProgramThatCannotBeRunSealsTheSessionAndExits126WithOneLine) {
  Workspace ws;
  ws.Write("not-executable", "#!/bin/sh\necho never\n", 0644);
  GuardResult r = RunLoud(ws, {ws.Path("not-executable")});
  BOOST_TEST(r.exit_code == 126, DescribeResult(r));
  BOOST_TEST(Lines(r.err).size() == 1u, DescribeResult(r));
  BOOST_TEST(r.out.empty());
  ExpectSealedAs(ws, r, 126);
}

}  // namespace
}  // namespace guard::e2e
