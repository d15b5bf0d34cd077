// Telling the user what happened, and long plans on a terminal (issue 40,
// points 4 and 5): a plan longer than the screen summarised with its count
// in the question; colour in sessions, status and show only when asked or
// on a terminal without NO_COLOR; `sessions` with none; status's summary
// after a normal session whose work left the tree; forget asking first;
// the prompt hook saying once; the session's end naming the next steps.
#define BOOST_TEST_MODULE cli_attention
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <string>
#include <vector>

#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/pty_run.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string Session(const Workspace& ws, const std::string& script) {
  GuardResult r = RunGuardBash(ws, script);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, "guard run: exit " << r.exit_code << "; stderr:\n" << r.err);
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  return r.new_sessions[0];
}

ProcessSpec Guard(const Workspace& ws, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {GuardBinary()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  spec.env["NO_COLOR"] = std::nullopt;
  spec.env["GUARD_NO_PROGRESS"] = "1";
  return spec;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// 200 files made by one session: its undo removes them all.
struct Many {
  Workspace ws;
  std::string id;
  Many() { id = Session(ws, "for i in $(seq 1 200); do echo $i > f$i; done"); }
};

BOOST_AUTO_TEST_CASE(ALongPlanOnATerminalIsSummarisedAndTheQuestionRepeatsTheCount) {
  Many m;
  ProcessSpec spec = Guard(m.ws, {"undo"});
  spec.stdin_data = "n\n";
  PtyResult r = RunOnPty(spec, 24);
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.out.find("200 paths to change") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("Apply this undo (200 paths)?") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("more (--verbose lists them all") != std::string::npos, r.out);
  // A screenful, not 200 lines.
  BOOST_CHECK_MESSAGE(Count(r.out, "\n") < 24, r.out);
  BOOST_CHECK(m.ws.Exists("f1") && m.ws.Exists("f200"));
}

BOOST_AUTO_TEST_CASE(VerboseListsEveryChangeOnATerminal) {
  Many m;
  ProcessSpec spec = Guard(m.ws, {"undo", "--verbose"});
  spec.stdin_data = "n\n";
  PtyResult r = RunOnPty(spec, 24);
  for (int i = 1; i <= 200; ++i) BOOST_CHECK_MESSAGE(r.out.find(" f" + std::to_string(i) + "\r\n") != std::string::npos, i);
}

BOOST_AUTO_TEST_CASE(APlanIntoAPipeHasEveryLine) {
  Many m;
  ProcessResult r = RunProcess(Guard(m.ws, {"undo", "--dry-run"}));
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_CHECK_EQUAL(Count(r.out, "\n"), 201u);
}

BOOST_AUTO_TEST_CASE(ColourOnlyWhenAskedOrOnATerminal) {
  Many m;
  for (const char* command : {"sessions", "status", "show"}) {
    BOOST_TEST_CONTEXT(command) {
      ProcessResult always = RunProcess(Guard(m.ws, {command, "--color=always"}));
      BOOST_REQUIRE_EQUAL(always.exit_code, 0);
      BOOST_CHECK_NE(always.out.find("\033[33m" + m.id), std::string::npos);
      ProcessResult piped = RunProcess(Guard(m.ws, {command}));
      BOOST_CHECK_EQUAL(piped.out.find('\033'), std::string::npos);
      ProcessSpec tty = Guard(m.ws, {command});
      tty.env["GUARD_PAGER"] = "cat";
      BOOST_CHECK_NE(RunOnPty(tty).out.find("\033[33m" + m.id), std::string::npos);
      tty.env["NO_COLOR"] = "1";
      BOOST_CHECK_EQUAL(RunOnPty(tty).out.find("\033[3"), std::string::npos);
      ProcessResult bad = RunProcess(Guard(m.ws, {command, "--color=sometimes"}));
      BOOST_CHECK_EQUAL(bad.exit_code, 2);
    }
  }
}

BOOST_AUTO_TEST_CASE(SessionsWithNoneSaysSo) {
  Workspace ws;
  ProcessResult r = RunProcess(Guard(ws, {"sessions"}));
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK_EQUAL(r.out, "");
  BOOST_CHECK_MESSAGE(r.err.find("no sessions in ") != std::string::npos, r.err);
}

// A session that ended normally, then `git checkout -- .` as a user would
// revert it: status gives the same summary as after a kill.
BOOST_AUTO_TEST_CASE(StatusAfterARevertedNormalSessionSaysTheWorkIsNotInTheTree) {
  Workspace ws;
  ws.Write("a.txt", "before\n");
  std::string id = Session(ws, "echo after > a.txt; echo new > b.txt");
  ProcessResult in_tree = RunProcess(Guard(ws, {"status"}));
  BOOST_CHECK_EQUAL(in_tree.out.find("not in the tree"), std::string::npos);
  ws.Write("a.txt", "before\n");
  BOOST_REQUIRE(::unlink(ws.Path("b.txt").c_str()) == 0);
  ProcessResult r = RunProcess(Guard(ws, {"status"}));
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(r.out.find("ended normally") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("NOT in the tree") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("guard replay --session " + id) != std::string::npos, r.out);
  // An undo of guard's own explains it: nothing to say then.
  Session(ws, "echo again > a.txt");
  ProcessResult undo = RunProcess(Guard(ws, {"undo", "--yes"}));
  BOOST_REQUIRE_EQUAL(undo.exit_code, 0);
  ProcessResult after_undo = RunProcess(Guard(ws, {"status"}));
  BOOST_CHECK_MESSAGE(after_undo.out.find("not in the tree") == std::string::npos, after_undo.out);
}

BOOST_AUTO_TEST_CASE(ForgetAsksFirstAndSaysWhatItRemoved) {
  Workspace ws;
  std::string id = Session(ws, "echo x > f");
  ProcessResult no_tty = RunProcess(Guard(ws, {"forget", id}));
  BOOST_CHECK_EQUAL(no_tty.exit_code, 2);
  BOOST_CHECK_NE(no_tty.err.find("without --yes"), std::string::npos);
  BOOST_CHECK_EQUAL(ws.SessionIds().size(), 1u);
  ProcessSpec spec = Guard(ws, {"forget", id});
  spec.stdin_data = "n\n";
  PtyResult no = RunOnPty(spec);
  BOOST_CHECK_EQUAL(no.exit_code, 1);
  BOOST_CHECK_NE(no.out.find("Forget this session"), std::string::npos);
  BOOST_CHECK_EQUAL(ws.SessionIds().size(), 1u);
  spec.stdin_data = "y\n";
  PtyResult yes = RunOnPty(spec);
  BOOST_CHECK_EQUAL(yes.exit_code, 0);
  BOOST_CHECK_MESSAGE(yes.out.find("guard forget: removed session " + id) != std::string::npos, yes.out);
  BOOST_CHECK(ws.SessionIds().empty());
}

BOOST_AUTO_TEST_CASE(ThePromptHookSaysOnceWhenTheWorkLeftTheTree) {
  Workspace ws;
  ws.Write("a.txt", "before\n");
  std::string id = Session(ws, "echo after > a.txt");
  ProcessResult quiet = RunProcess(Guard(ws, {"__prompt"}));
  BOOST_CHECK_EQUAL(quiet.exit_code, 0);
  BOOST_CHECK_EQUAL(quiet.err, "");
  ws.Write("a.txt", "before\n");
  ProcessResult said = RunProcess(Guard(ws, {"__prompt"}));
  BOOST_CHECK_EQUAL(said.exit_code, 0);
  BOOST_CHECK_MESSAGE(said.err.find(id) != std::string::npos && said.err.find("not in the tree") != std::string::npos,
                      said.err);
  BOOST_CHECK_EQUAL(Count(said.err, "\n"), 1u);
  ProcessResult again = RunProcess(Guard(ws, {"__prompt"}));
  BOOST_CHECK_EQUAL(again.err, "");
}

BOOST_AUTO_TEST_CASE(BashPromptHookIsAddedOnceHoweverOftenEvaluated) {
  Workspace ws;
  ProcessSpec spec;
  spec.argv = {"bash", "-c",
               "eval \"$(" + GuardBinary() + " shell-init bash --prompt)\"; eval \"$(" + GuardBinary() +
                   " shell-init bash --prompt)\"; PROMPT_COMMAND=\"$PROMPT_COMMAND\"; echo \"$PROMPT_COMMAND\"; "
                   "declare -f _guard_prompt >/dev/null && echo hooked"};
  spec.cwd = ws.tree();
  spec.env = GuardEnv(ws);
  ProcessResult r = RunProcess(spec);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_CHECK_EQUAL(Count(r.out, "_guard_prompt"), 1u);
  BOOST_CHECK_NE(r.out.find("hooked"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(TheSessionsEndNamesTheNextStepsUnlessQuiet) {
  Workspace ws;
  GuardRun loud;
  loud.quiet = false;
  loud.command = {"bash", "-c", "echo x > f"};
  GuardResult r = RunGuard(ws, loud);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(r.err.find("1 path touched; review: guard diff, revert: guard undo") != std::string::npos, r.err);
  GuardRun quiet;  // --quiet
  quiet.command = {"bash", "-c", "echo y > g"};
  GuardResult q = RunGuard(ws, quiet);
  BOOST_REQUIRE_EQUAL(q.exit_code, 0);
  BOOST_CHECK_EQUAL(q.err.find("review: guard diff"), std::string::npos);
}

}  // namespace
}  // namespace guard::e2e
