// A call guard cannot decode (its arguments cannot be read from the
// tracee) is a capture failure: guard cannot save what it would change, so
// it follows --on-capture-failure like a full store does (docs/capture.md).
// With block the call fails and the file stays as it was, and guard says so
// in one line; with allow the call runs, unrecorded, and the session counts
// it as not captured. Never does it run silently.
//
// A real decode failure cannot be made on demand, so these tests use the
// test-only fault injection point (supervisor/trace/test_fault.h):
// GUARD_TEST_FAULT=decode-fail:openat in guard's own environment makes every
// trapped openat fail to decode.
#define BOOST_TEST_MODULE decode_failure
#include <boost/test/unit_test.hpp>
#include "tests/e2e/support/trace_mode_only.h"

#include <algorithm>

#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/expect_capture.h"
#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

GuardResult Overwrite(const Workspace& ws, const std::string& policy, bool inject) {
  GuardRun run;
  run.command = {"sh", "-c", "echo changed > f"};
  run.quiet = false;
  run.guard_options = {"--on-capture-failure=" + policy};
  if (inject) run.env["GUARD_TEST_FAULT"] = "decode-fail:openat";
  return RunGuard(ws, run);
}

std::vector<std::string> GuardLines(const std::string& err) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(err)) {
    if (line.rfind("guard: ", 0) == 0) out.push_back(line);
  }
  return out;
}

size_t OperationsOn(const SessionView& s, const std::string& path) {
  const std::vector<Record>& rs = s.records();
  return std::count_if(rs.begin(), rs.end(), [&](const Record& r) { return IsOperation(r.kind) && r.path == path; });
}

BOOST_AUTO_TEST_CASE(WithBlockAnUndecodableCallFailsAndGuardSaysSoOnce) {
  Workspace ws;
  ws.Write("f", "original\n");
  GuardResult r = Overwrite(ws, "block", /*inject=*/true);
  BOOST_TEST(r.exit_code != 0, "the shell's redirection should have failed: " << DescribeResult(r));
  BOOST_TEST(ws.Read("f") == "original\n");
  std::vector<std::string> lines = GuardLines(r.err);
  BOOST_TEST(lines.size() == 2u, DescribeResult(r));  // the refusal, then the session's summary
  BOOST_TEST(Contains(r.err, "the change was refused (--on-capture-failure=block)"), DescribeResult(r));
  BOOST_TEST(Contains(r.err, "1 changes refused"), DescribeResult(r));
  SessionView s = OnlyNewSession(ws, r);
  BOOST_TEST(OperationsOn(s, "f") == 0u);
}

BOOST_AUTO_TEST_CASE(WithAllowAnUndecodableCallRunsAndCountsAsNotCaptured) {
  Workspace ws;
  ws.Write("f", "original\n");
  GuardResult r = Overwrite(ws, "allow", /*inject=*/true);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.Read("f") == "changed\n");
  BOOST_TEST(Contains(r.err, "the change was allowed unrecorded (--on-capture-failure=allow)"), DescribeResult(r));
  BOOST_TEST(Contains(r.err, "1 changes not captured"), DescribeResult(r));
  SessionView s = OnlyNewSession(ws, r);
  BOOST_TEST(OperationsOn(s, "f") == 0u);
  BOOST_TEST(Contains(ReadFile(ws.home() + "/sessions/" + s.meta().id + "/guard.log"), "not captured"));
}

// The line names the path as it is, bytes and all, but escaped: a name
// holding a newline and an escape sequence must not forge a line of its own
// or drive the terminal.
BOOST_AUTO_TEST_CASE(TheRefusalLineEscapesThePath) {
  Workspace ws;
  GuardRun run;
  // (The shell's own complaint, which prints the name raw, is silenced by
  // closing its stderr: no open for the fault to hit.)
  run.command = {"sh", "-c", "exec 2>&-; echo changed > \"$(printf 'a\\nguard: forged\\033[2J')\""};
  run.quiet = false;
  run.env["GUARD_TEST_FAULT"] = "decode-fail:openat";
  GuardResult r = RunGuard(ws, run);
  std::vector<std::string> lines = GuardLines(r.err);
  BOOST_TEST(lines.size() == 2u, DescribeResult(r));  // the refusal, then the summary: nothing forged
  BOOST_TEST(Contains(r.err, "a\\x0aguard: forged\\x1b[2J"), DescribeResult(r));
  BOOST_TEST(!Contains(r.err, "\033"), DescribeResult(r));
}

// The fault is read from guard's own environment when it starts: a command
// that sets it for itself changes nothing, and its call is captured.
BOOST_AUTO_TEST_CASE(TheFaultCannotBeSetFromInsideTheSession) {
  Workspace ws;
  ws.Write("f", "original\n");
  GuardRun run;
  run.command = {"sh", "-c", "export GUARD_TEST_FAULT=decode-fail:openat; sh -c 'echo changed > f'"};
  run.guard_options = {"--on-capture-failure=block"};
  GuardResult r = RunGuard(ws, run);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.Read("f") == "changed\n");
  SessionView s = OnlyNewSession(ws, r);
  BOOST_TEST(OperationsOn(s, "f") == 1u);
}

// Without the fault the same call is captured (the tests above fail for the
// fault, not for the command).
BOOST_AUTO_TEST_CASE(WithoutTheFaultTheCallIsCaptured) {
  Workspace ws;
  ws.Write("f", "original\n");
  GuardResult r = Overwrite(ws, "block", /*inject=*/false);
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ws.Read("f") == "changed\n");
  BOOST_TEST(GuardLines(r.err).size() == 1u, DescribeResult(r));
  SessionView s = OnlyNewSession(ws, r);
  BOOST_TEST(OperationsOn(s, "f") == 1u);
}

}  // namespace
}  // namespace guard::e2e
