// config.toml with the real binary: its values become the defaults, flags
// win over them, `guard config` says where each came from, and a file guard
// cannot read stops it before any session starts.
#define BOOST_TEST_MODULE config_file
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

std::string ConfigFile(const Workspace& ws) { return ws.dir() + "/config/guard/config.toml"; }

void WriteConfig(const Workspace& ws, const std::string& text) {
  if (!PathExists(ws.dir() + "/config")) MakeDir(ws.dir() + "/config");
  if (!PathExists(ws.dir() + "/config/guard")) MakeDir(ws.dir() + "/config/guard");
  WriteFile(ConfigFile(ws), text);
}

BOOST_AUTO_TEST_CASE(ConfigPrintsEachSettingWithWhereItCameFrom) {
  Workspace ws;
  WriteConfig(ws, "[capture]\non_failure = \"allow\"\n\n[retention]\nkeep = \"7d\"\n");
  GuardResult r = RunGuardCommand(ws, {"config"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(r.out.find("# " + ConfigFile(ws) + "\n") == 0, r.out);
  BOOST_TEST(r.out.find("capture.on_failure = \"allow\"") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("# " + ConfigFile(ws) + ":2\n") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("retention.keep = \"7d\"") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("# " + ConfigFile(ws) + ":5\n") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("retention.max_size = \"10GiB\"") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("# built-in default") != std::string::npos, r.out);
  // A flag wins over the file.
  r = RunGuardCommand(ws, {"--on-capture-failure", "block", "--mode", "trace", "config"});
  BOOST_TEST(r.out.find("capture.on_failure = \"block\"") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("# --on-capture-failure") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("# --mode") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(WithoutAFileEverySettingIsTheBuiltInDefault) {
  Workspace ws;
  GuardResult r = RunGuardCommand(ws, {"config"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("(absent: built-in defaults)") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(ws.dir() + "/config/guard/config.toml") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(AConfigurationGuardCannotReadStopsItBeforeAnySession) {
  Workspace ws;
  struct Case {
    std::string text;
    std::string expect;
  };
  for (const Case& c : {Case{"[retention]\nkeep = \"30d\"\nmax_sise = \"1G\"\n", ":3: unknown key 'retention.max_sise'"},
                        Case{"[capture\non_failure = \"allow\"\n", ":1: not valid TOML"},
                        Case{"[capture]\nmode = \"ptrace\"\n", ":2: capture.mode: unknown mode 'ptrace'"}}) {
    BOOST_TEST_CONTEXT(c.text) {
      WriteConfig(ws, c.text);
      GuardResult r = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo x > made"}});
      BOOST_TEST(r.exit_code == 2);
      BOOST_TEST(r.err.find("guard: " + ConfigFile(ws) + c.expect) == 0, r.err);
      BOOST_TEST((std::count(r.err.begin(), r.err.end(), '\n') == 1), r.err);
      BOOST_TEST(ws.SessionIds().empty());
      BOOST_TEST(!ws.Exists("made"));
      GuardResult other = RunGuardCommand(ws, {"sessions"});
      BOOST_TEST(other.exit_code == 2);
    }
  }
}

BOOST_AUTO_TEST_CASE(TheFilesCaptureFailurePolicyAndAgentsAreUsed) {
  Workspace ws;
  WriteConfig(ws, "[shell_init]\nagents = [\"opencode\"]\n[capture]\non_failure = \"allow\"\n");
  GuardResult r = RunGuardCommand(ws, {"shell-init", "bash"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.find("opencode()") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("claude()") == std::string::npos, r.out);
  r = RunGuardCommand(ws, {"shell-init", "bash", "aider"});  // named agents win
  BOOST_TEST(r.out.find("aider()") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("opencode()") == std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(TheSyncIntervalOfTheFileIsTheSessionsGroupCommits) {
  Workspace ws;
  RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo a > first"}});
  BOOST_REQUIRE(ws.SessionIds().size() == 1u);
  const std::string first_log = ReadFile(ws.home() + "/sessions/" + ws.SessionIds().front() + "/guard.log");
  BOOST_TEST(first_log.find("durable every") == std::string::npos, first_log);  // the default says nothing
  WriteConfig(ws, "[capture]\nsync_every = \"2s\"\n");
  GuardResult r = RunGuardCommand(ws, {"config"});
  BOOST_TEST(r.out.find("capture.sync_every = \"2s\"") != std::string::npos, r.out);
  r = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo b > made"}});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE(r.new_sessions.size() == 1u);
  const std::string log = ReadFile(ws.home() + "/sessions/" + r.new_sessions[0] + "/guard.log");
  BOOST_TEST(log.find("durable every 2000 ms") != std::string::npos, log);
  // The session is whole all the same: its end was committed at the seal.
  BOOST_TEST(RunGuardCommand(ws, {"undo", "--yes", "--session", r.new_sessions[0]}).exit_code == 0);
  BOOST_TEST(!ws.Exists("made"));
}

BOOST_AUTO_TEST_CASE(AnUnknownModeOnTheCommandLineIsRefusedBeforeAnySession) {
  Workspace ws;
  GuardResult r = RunGuard(ws, GuardRun{.command = {"true"}, .guard_options = {"--mode", "ptrace"}});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("unknown mode 'ptrace'") != std::string::npos, r.err);
  BOOST_TEST(ws.SessionIds().empty());
  for (const char* mode : {"trace", "preload", "auto"}) {
    r = RunGuard(ws, GuardRun{.command = {"true"}, .guard_options = {"--mode", mode}});
    BOOST_TEST(r.exit_code == 0, mode << ": " << DescribeResult(r));
  }
}

}  // namespace
}  // namespace guard::e2e
