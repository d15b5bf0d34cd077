// Which session a bare `guard undo`, `replay` or `redo` means, and what the
// same command typed again does (docs/restore.md, "Which session, typed
// again"): the last session the user ran, never guard's own restores;
// replay after undo brings the work back; undo twice says the session is
// undone already and names the one before; `undo --turns 1` typed again
// steps one more turn back; redo reverses the last undo; `guard sessions`
// shows a restore as what it restored. Before, every restore became the
// default target: replay after undo replayed the undo, and a second
// `undo --turns 1` found "0 marked turns".
#define BOOST_TEST_MODULE restore_chain
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string MustRunSession(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0 && r.new_sessions.size() == 1, DescribeResult(r));
  return r.new_sessions[0];
}

// `guard ARGS` that must exit 0; the session it recorded ("" if none).
std::string Must(const Workspace& ws, const std::vector<std::string>& args) {
  GuardResult r = RunGuardCommand(ws, args);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard " << args[0] << ": " << DescribeResult(r));
  return r.new_sessions.size() == 1 ? r.new_sessions[0] : "";
}

BOOST_AUTO_TEST_CASE(ReplayAfterUndoBringsTheWorkBack) {
  Workspace ws;
  ws.Write("a", "before\n");
  MustRunSession(ws, "echo after > a && echo new > b");
  Must(ws, {"undo", "--yes"});
  BOOST_TEST(ws.Read("a") == "before\n");
  BOOST_TEST(!ws.Exists("b"));
  Must(ws, {"replay", "--yes"});
  BOOST_TEST(ws.Read("a") == "after\n");
  BOOST_TEST(ws.Exists("b"));
  // And the diff of a bare `guard diff` is still the session's.
  GuardResult diff = RunGuardCommand(ws, {"diff"});
  BOOST_TEST(diff.out.find("+after") != std::string::npos, DescribeResult(diff));
}

BOOST_AUTO_TEST_CASE(UndoTypedTwiceSaysTheSessionIsAlreadyUndoneAndNamesTheOneBefore) {
  Workspace ws;
  std::string first = MustRunSession(ws, "echo one > one");
  std::string second = MustRunSession(ws, "echo two > two");
  std::string undo = Must(ws, {"undo", "--yes"});
  BOOST_REQUIRE(!undo.empty());
  BOOST_TEST(!ws.Exists("two"));
  GuardResult again = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(again.exit_code == 1, DescribeResult(again));
  BOOST_TEST(again.err.find("session " + second + " is already undone (by session " + undo + ")") != std::string::npos,
             DescribeResult(again));
  BOOST_TEST(again.err.find("the session before it is " + first) != std::string::npos, DescribeResult(again));
  BOOST_TEST(again.new_sessions.empty());
  BOOST_TEST(ws.Exists("one"), "the session before was undone too");
  // Named by its id, an undo is a session like any: its undo reverses it.
  Must(ws, {"undo", "--yes", "--session", undo});
  BOOST_TEST(ws.Read("two") == "two\n");
  // And that counts as a redo: a plain undo undoes the session again.
  Must(ws, {"undo", "--yes"});
  BOOST_TEST(!ws.Exists("two"));
  BOOST_TEST(ws.Exists("one"));
}

// Chains longer than two: an undo of an undo of an undo of the session
// is the session undone again (docs/restore.md): a plain undo then says so,
// replay brings the work back without a conflict, and redo reverses the
// last of them. Before, the third restore was not read into the chain, and
// replay found every path "changed since".
BOOST_AUTO_TEST_CASE(UndoOfAnUndoOfAnUndoIsTheSessionUndoneAgain) {
  Workspace ws;
  ws.Write("a", "before\n");
  std::string id = MustRunSession(ws, "echo after > a && echo new > b");
  std::string u1 = Must(ws, {"undo", "--yes"});
  BOOST_TEST(ws.Read("a") == "before\n");
  std::string u2 = Must(ws, {"undo", "--yes", "--session", u1});
  BOOST_TEST(ws.Read("a") == "after\n");
  std::string u3 = Must(ws, {"undo", "--yes", "--session", u2});
  BOOST_REQUIRE(!u3.empty());
  BOOST_TEST(ws.Read("a") == "before\n");
  BOOST_TEST(!ws.Exists("b"));
  GuardResult again = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(again.exit_code == 1, DescribeResult(again));
  BOOST_TEST(again.err.find("session " + id + " is already undone (by session " + u3 + ")") != std::string::npos,
             DescribeResult(again));
  // redo reverses u3 (the undo in effect), undo undoes again.
  Must(ws, {"redo", "--yes"});
  BOOST_TEST(ws.Read("a") == "after\n");
  BOOST_TEST(ws.Exists("b"));
  Must(ws, {"undo", "--yes"});
  BOOST_TEST(ws.Read("a") == "before\n");
  // A fourth level: the undo of u3 is the redo it amounts to.
  Must(ws, {"undo", "--yes", "--session", u3});
  BOOST_TEST(ws.Read("a") == "after\n");
  GuardResult replay = RunGuardCommand(ws, {"replay", "--yes"});
  BOOST_TEST(replay.exit_code == 0, DescribeResult(replay));
  BOOST_TEST(replay.out.find("conflict") == std::string::npos, DescribeResult(replay));
  BOOST_TEST(ws.Read("a") == "after\n");
  Must(ws, {"undo", "--yes"});
  BOOST_TEST(ws.Read("a") == "before\n");
  BOOST_TEST(!ws.Exists("b"));
}

BOOST_AUTO_TEST_CASE(RedoReversesTheLastUndoAndThenHasNothingToReverse) {
  Workspace ws;
  ws.Write("a", "before\n");
  MustRunSession(ws, "echo after > a");
  GuardResult nothing = RunGuardCommand(ws, {"redo", "--yes"});
  BOOST_TEST(nothing.exit_code == 1, DescribeResult(nothing));
  BOOST_TEST(nothing.err.find("nothing to redo") != std::string::npos, DescribeResult(nothing));
  Must(ws, {"undo", "--yes"});
  BOOST_TEST(ws.Read("a") == "before\n");
  Must(ws, {"redo", "--yes"});
  BOOST_TEST(ws.Read("a") == "after\n");
  GuardResult twice = RunGuardCommand(ws, {"redo", "--yes"});
  BOOST_TEST(twice.exit_code == 1, DescribeResult(twice));
  BOOST_TEST(ws.Read("a") == "after\n");
}

// Three marked turns (`guard mark`, which the tracer answers: guard's
// default mode), each adding a file.
BOOST_AUTO_TEST_CASE(UndoTurnsOneTypedAgainStepsOneMoreTurnBackAndRedoStepsForward) {
  Workspace ws;
  const std::string g = "'" + GuardBinary() + "'";
  MustRunSession(ws, "set -e; " + g + " mark t1; echo 1 > one; " + g + " mark t2; echo 2 > two; " + g +
                         " mark t3; echo 3 > three");
  Must(ws, {"undo", "--turns", "1", "--yes"});
  BOOST_TEST((ws.Exists("one") && ws.Exists("two") && !ws.Exists("three")));
  Must(ws, {"undo", "--turns", "1", "--yes"});
  BOOST_TEST((ws.Exists("one") && !ws.Exists("two") && !ws.Exists("three")));
  GuardResult too_far = RunGuardCommand(ws, {"undo", "--turns", "2", "--yes"});
  BOOST_TEST(too_far.exit_code == 2, DescribeResult(too_far));
  BOOST_TEST(ws.Exists("one"));
  Must(ws, {"redo", "--yes"});
  BOOST_TEST((ws.Exists("one") && ws.Exists("two") && !ws.Exists("three")));
  Must(ws, {"redo", "--yes"});
  BOOST_TEST((ws.Exists("one") && ws.Exists("two") && ws.Exists("three")));
}

BOOST_AUTO_TEST_CASE(SessionsShowARestoreAsWhatItRestored) {
  Workspace ws;
  std::string id = MustRunSession(ws, "echo x > a");
  std::string undo = Must(ws, {"undo", "--yes"});
  std::string replay = Must(ws, {"replay", "--yes"});
  GuardResult listed = RunGuardCommand(ws, {"sessions"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, DescribeResult(listed));
  BOOST_TEST(listed.out.find("undo of " + id) != std::string::npos, DescribeResult(listed));
  BOOST_TEST(listed.out.find("replay of " + id) != std::string::npos, DescribeResult(listed));
  BOOST_TEST(listed.out.find("__restore") == std::string::npos, DescribeResult(listed));
}

}  // namespace
}  // namespace guard::e2e
