// The words of guard's command line, as a git user expects them: `guard
// help [COMMAND]` prints help and runs nothing; a command runs after `--`
// alone, and any other word that is not a subcommand is one line with a
// suggestion and exit 2, recording nothing; CLI11's parse errors are one
// line starting with "guard:" and exit 2; usage lines say guard, not the
// binary's path; and the exit statuses follow the one table of the man
// page's EXIT STATUS.
#define BOOST_TEST_MODULE cli_words
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

size_t Lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A workspace with one session that wrote a.txt: what an undo would take back.
struct OneSession {
  Workspace ws;
  OneSession() {
    ws.Write("a.txt", "before\n");
    GuardResult r = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo after > a.txt"}});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  }
};

BOOST_AUTO_TEST_CASE(HelpPrintsHelpAndNeverRunsTheCommand) {
  OneSession s;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"help", "undo"}, {"help", "replay"}, {"help", "forget"}, {"help", "gc"}}) {
    GuardCommand command{.args = args, .stdin_data = std::string("y\n")};
    GuardResult r = RunGuardCommand(s.ws, command);
    BOOST_TEST_CONTEXT(args[1]) {
      BOOST_TEST(r.exit_code == 0, DescribeResult(r));
      BOOST_TEST(r.out.find("Usage: guard " + args[1]) != std::string::npos, r.out);
      BOOST_TEST(r.err.empty(), r.err);
      BOOST_TEST(r.new_sessions.empty());
    }
  }
  BOOST_TEST(s.ws.Read("a.txt") == "after\n");  // nothing was undone
  BOOST_TEST(s.ws.SessionIds().size() == 1u);   // nor forgotten
  GuardResult all = RunGuardCommand(s.ws, {"help"});
  BOOST_TEST(all.exit_code == 0);
  BOOST_TEST(all.out.find("Usage: guard [OPTIONS]") != std::string::npos, all.out);
  for (const char* name : {"undo", "sessions", "config", "help"}) BOOST_TEST(all.out.find(name) != std::string::npos);
  BOOST_TEST(all.new_sessions.empty());
  GuardResult typo = RunGuardCommand(s.ws, {"help", "dif"});
  BOOST_TEST(typo.exit_code == 2);
  BOOST_TEST(typo.err == "guard: 'dif' is not a guard command; did you mean 'diff'?\n", typo.err);
}

BOOST_AUTO_TEST_CASE(AWordThatIsNoSubcommandIsOneLineWithASuggestionAndRecordsNothing) {
  OneSession s;
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  for (const Case& c : {
           Case{{"ls"}, "guard: 'ls' is not a guard command; did you mean 'guard -- ls'?\n"},
           Case{{"ls", "-la"}, "guard: 'ls' is not a guard command; did you mean 'guard -- ls'?\n"},
           Case{{"--root", ".", "ls"}, "guard: 'ls' is not a guard command; did you mean 'guard -- ls'?\n"},
           Case{{"-q", "bash", "-c", "echo x > made"},
                "guard: 'bash' is not a guard command; did you mean 'guard -- bash'?\n"},
           Case{{"./run.sh"}, "guard: './run.sh' is not a guard command; did you mean 'guard -- ./run.sh'?\n"},
           Case{{"dif"}, "guard: 'dif' is not a guard command; did you mean 'diff'?\n"},
           Case{{"stauts"}, "guard: 'stauts' is not a guard command; did you mean 'status'?\n"},
           Case{{"udno", "--yes"}, "guard: 'udno' is not a guard command; did you mean 'undo'?\n"},
           Case{{"xyzzy-no-such-word"}, "guard: 'xyzzy-no-such-word' is not a guard command; see 'guard help'\n"},
       }) {
    GuardResult r = RunGuardCommand(s.ws, c.args);
    BOOST_TEST_CONTEXT(c.args[0]) {
      BOOST_TEST(r.exit_code == 2, DescribeResult(r));
      BOOST_TEST(r.err == c.err);
      BOOST_TEST(r.out.empty(), r.out);
      BOOST_TEST(r.new_sessions.empty());
    }
  }
  BOOST_TEST(!s.ws.Exists("made"));
  BOOST_TEST(s.ws.Read("a.txt") == "after\n");
  // After `--` the same words run, as always.
  GuardResult run = RunGuardCommand(s.ws, {"-q", "--", "bash", "-c", "echo x > made"});
  BOOST_TEST(run.exit_code == 0, DescribeResult(run));
  BOOST_TEST(run.new_sessions.size() == 1u);
  BOOST_TEST(s.ws.Read("made") == "x\n");
}

BOOST_AUTO_TEST_CASE(AParseErrorIsOneLineStartingWithGuardAndExits2) {
  OneSession s;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"undo", "--bogus"}, {"--bogus"}, {"undo", "--session"}, {"sessions", "extra"},
        {"undo", "--to", "@1", "--turns", "1"}, {"--mode"}}) {
    GuardResult r = RunGuardCommand(s.ws, args);
    BOOST_TEST_CONTEXT(args[0] + " " + args.back()) {
      BOOST_TEST(r.exit_code == 2, DescribeResult(r));
      BOOST_TEST(r.err.rfind("guard: ", 0) == 0, r.err);
      BOOST_TEST(Lines(r.err) == 1u, r.err);
      BOOST_TEST(r.out.empty(), r.out);
      BOOST_TEST(r.new_sessions.empty());
    }
  }
  GuardResult r = RunGuardCommand(s.ws, {"undo", "--bogus"});
  BOOST_TEST(r.err.find("undo: ") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("--bogus") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(TurnsPastAnyIntegerIsOutOfRangeNotClamped) {
  OneSession s;
  for (const char* turns : {"99999999999999999999", "18446744073709551616", "0", "-1", "1000001"}) {
    GuardResult r = RunGuardCommand(s.ws, {"undo", "--dry-run", "--turns", turns});
    BOOST_TEST_CONTEXT(turns) {
      BOOST_TEST(r.exit_code == 2, DescribeResult(r));
      BOOST_TEST(r.err.find(std::string("'") + turns + "'") != std::string::npos, r.err);
      BOOST_TEST(r.err.find("a whole number from 1 to 1000000") != std::string::npos, r.err);
      BOOST_TEST(r.err.find("18446744073709551615") == std::string::npos, r.err);  // no clamped number
      BOOST_TEST(Lines(r.err) == 1u, r.err);
    }
  }
}

BOOST_AUTO_TEST_CASE(UsageLinesSayGuardNotTheBinarysPath) {
  Workspace ws;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"undo", "--help"}, {"help", "gc"}}) {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST(r.exit_code == 0);
    BOOST_TEST(r.out.find("Usage: guard") != std::string::npos, r.out);
    BOOST_TEST(r.out.find(GuardBinary()) == std::string::npos, r.out);
  }
  GuardResult bare = RunGuardCommand(ws, std::vector<std::string>{});
  BOOST_TEST(bare.exit_code == 2);
  BOOST_TEST(bare.err.find(GuardBinary()) == std::string::npos, bare.err);
}

BOOST_AUTO_TEST_CASE(HelpFitsIn80Columns) {
  Workspace ws;
  std::vector<std::vector<std::string>> all = {{"--help"}};
  for (const char* name : {"sessions", "undo", "replay", "diff", "gc", "config", "shell-init", "hooks"}) {
    all.push_back({name, "--help"});
  }
  for (const std::vector<std::string>& args : all) {
    GuardResult r = RunGuardCommand(ws, args);
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) BOOST_TEST(line.size() <= 80u, args[0] << ": " << line);
  }
}

BOOST_AUTO_TEST_CASE(ExitStatusesFollowTheTable) {
  OneSession s;
  s.ws.Write("not-executable", "#!/bin/sh\nexit 0\n");
  struct Case {
    std::vector<std::string> args;
    int status;
  };
  for (const Case& c : {
           Case{{"sessions"}, 0},
           Case{{"checkpoint"}, 1},  // a guard command that failed: the root is in no git work tree
           Case{{"undo", "--bogus"}, 2},  // usage errors
           Case{{"show", "--session", "no-such-session"}, 2},
           Case{{"-q", "--", "no-such-program-guard-test"}, 127},
           Case{{"-q", "--", "./not-executable"}, 126},
           Case{{"-q", "--", "bash", "-c", "exit 7"}, 7},  // the command's own
           Case{{"-q", "--", "bash", "-c", "kill -TERM $$"}, 128 + 15},
       }) {
    GuardResult r = RunGuardCommand(s.ws, c.args);
    BOOST_TEST_CONTEXT(c.args[0] + " " + c.args.back()) { BOOST_TEST(r.exit_code == c.status, DescribeResult(r)); }
  }
}

}  // namespace
}  // namespace guard::e2e
