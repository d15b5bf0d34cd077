// config.toml with the real binary: its values become the defaults, flags
// win over them, `guard config` says where each came from; a problem in the
// file is a warning with the built-in default for its key, except that a
// session refuses a capture setting it is unsure of and nothing is removed
// on a default (config_problems.h); `guard config get/set` read and write
// one key, keeping the rest of the file.
#define BOOST_TEST_MODULE config_file
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

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

BOOST_AUTO_TEST_CASE(ABrokenCaptureSettingStopsASessionBeforeItStarts) {
  Workspace ws;
  struct Case {
    std::string text;
    std::string expect;
  };
  for (const Case& c : {Case{"[capture]\non_failure = \"allow\"\nmode = \"ptrace\"\n", ":3: capture.mode: unknown mode 'ptrace'"},
                        Case{"[capture\non_failure = \"allow\"\n", ":1: not valid TOML"},
                        Case{"[capture]\non_falure = \"allow\"\n", ":2: unknown key 'capture.on_falure'"}}) {
    BOOST_TEST_CONTEXT(c.text) {
      WriteConfig(ws, c.text);
      GuardResult r = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo x > made"}});
      BOOST_TEST(r.exit_code == 2);
      BOOST_TEST(r.err.find("guard: " + ConfigFile(ws) + c.expect) == 0, r.err);
      BOOST_TEST((std::count(r.err.begin(), r.err.end(), '\n') == 1), r.err);
      BOOST_TEST(ws.SessionIds().empty());
      BOOST_TEST(!ws.Exists("made"));
    }
  }
}

BOOST_AUTO_TEST_CASE(ABrokenKeyIsAWarningAndItsDefaultForReadingAndRestoring) {
  Workspace ws;
  ws.Write("a.txt", "before\n");
  GuardResult session = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo after > a.txt"}});
  BOOST_REQUIRE(session.exit_code == 0);
  WriteConfig(ws, "[capture]\nmode = \"ptrace\"\n[retention]\nkeep = \"forever\"\n");
  const std::string warning = "guard: warning: " + ConfigFile(ws) + ":2: capture.mode: unknown mode 'ptrace'";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"sessions"}, {"status"}, {"show"}, {"diff"}, {"config"}}) {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST_CONTEXT(args[0]) {
      BOOST_TEST(r.exit_code == 0, DescribeResult(r));
      BOOST_TEST(r.err.find(warning) == 0, r.err);
      BOOST_TEST(r.err.find(ConfigFile(ws) + ":4: retention.keep: 'forever' is not a duration") != std::string::npos, r.err);
      BOOST_TEST((std::count(r.err.begin(), r.err.end(), '\n') == 2), r.err);  // one line a problem
    }
  }
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(undo.err.find(warning) == 0, undo.err);
  BOOST_TEST(ws.Read("a.txt") == "before\n");
  // A broken key that is not the capture's lets a session start.
  WriteConfig(ws, "[retention]\nkeep = \"forever\"\n");
  GuardResult run = RunGuard(ws, GuardRun{.command = {"bash", "-c", "echo x > made"}});
  BOOST_TEST(run.exit_code == 0, DescribeResult(run));
  BOOST_TEST(run.err.find("retention.keep: 'forever' is not a duration") != std::string::npos, run.err);
  BOOST_TEST(run.err.find("gc waits until it is mended") != std::string::npos, run.err);
  BOOST_TEST(ws.Read("made") == "x\n");
}

BOOST_AUTO_TEST_CASE(NothingIsRemovedWhileTheFileIsBroken) {
  Workspace ws;
  for (int i = 0; i < 3; ++i) RunGuard(ws, GuardRun{.command = {"true"}});
  const std::vector<std::string> ids = ws.SessionIds();
  BOOST_REQUIRE(ids.size() == 3u);
  // What the user wrote (keep everything a year) cannot be read; the
  // default (30d, 3 newest) must not be applied in its place.
  WriteConfig(ws, "[retention]\nkeep = \"1 year\"\nkeep_newest = 1\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"gc"}, {"gc", "--keep", "0s", "--keep-newest", "0"}, {"forget", "--yes", ids[0]}}) {
    GuardResult r = RunGuardCommand(ws, args);
    BOOST_TEST_CONTEXT(args[0]) {
      BOOST_TEST(r.exit_code == 1, DescribeResult(r));
      BOOST_TEST(r.err.find("guard: " + ConfigFile(ws) + ":2: retention.keep") == 0, r.err);
      BOOST_TEST(r.err.find("nothing is removed until the configuration is mended") != std::string::npos, r.err);
      BOOST_TEST((std::count(r.err.begin(), r.err.end(), '\n') == 1), r.err);
    }
  }
  BOOST_TEST(ws.SessionIds() == ids);
  // Mended, gc applies the user's own policy: the newest one kept.
  GuardResult set = RunGuardCommand(ws, {"config", "set", "retention.keep", "0s"});
  BOOST_TEST(set.exit_code == 0, DescribeResult(set));
  GuardResult gc = RunGuardCommand(ws, {"gc"});
  BOOST_TEST(gc.exit_code == 0, DescribeResult(gc));
  BOOST_TEST(gc.err.find("warning") == std::string::npos, gc.err);
  BOOST_TEST(ws.SessionIds() == std::vector<std::string>{ids.back()});
}

BOOST_AUTO_TEST_CASE(ConfigSetWritesOneKeyAndKeepsTheRestOfTheFile) {
  Workspace ws;
  const std::string before =
      "# my settings\n"
      "[capture]\n"
      "on_failure = \"allow\"   # I would rather lose a pre-image than stop\n"
      "\n"
      "# how long to keep things\n"
      "[retention]\n"
      "keep = \"30d\" # a month\n"
      "auto_gc = true\n"
      "\n"
      "# agents\n";
  WriteConfig(ws, before);
  GuardResult r = RunGuardCommand(ws, {"config", "set", "retention.keep", "12h"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  r = RunGuardCommand(ws, {"config", "set", "retention.keep_newest", "5"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  r = RunGuardCommand(ws, {"config", "set", "shell_init.agents", "[\"claude\", \"aider\"]"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  r = RunGuardCommand(ws, {"config", "set", "capture.mode", "trace"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ReadFile(ConfigFile(ws)) ==
             "# my settings\n"
             "[capture]\n"
             "on_failure = \"allow\"   # I would rather lose a pre-image than stop\n"
             "mode = \"trace\"\n"
             "\n"
             "# how long to keep things\n"
             "[retention]\n"
             "keep = \"12h\" # a month\n"
             "auto_gc = true\n"
             "keep_newest = 5\n"
             "\n"
             "# agents\n"
             "\n"
             "[shell_init]\n"
             "agents = [\"claude\", \"aider\"]\n");
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"retention.keep", "12h"}, {"retention.keep_newest", "5"}, {"capture.mode", "trace"},
           {"capture.on_failure", "allow"}, {"shell_init.agents", "[\"claude\", \"aider\"]"}}) {
    GuardResult get = RunGuardCommand(ws, {"config", "get", key});
    BOOST_TEST(get.exit_code == 0);
    BOOST_TEST(get.out == value + "\n", key);
    BOOST_TEST(get.err.empty(), get.err);
  }
  // A value guard would not read never reaches the file; nor an unknown key.
  const std::string kept = ReadFile(ConfigFile(ws));
  GuardResult bad = RunGuardCommand(ws, {"config", "set", "retention.keep", "forever"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.err == "guard: config set: retention.keep: 'forever' is not a duration (a number and one of ms, s, "
                        "m, h, d, w: \"30d\")\n", bad.err);
  GuardResult unknown = RunGuardCommand(ws, {"config", "set", "retention.kep", "1d"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.err == "guard: config set: unknown key 'retention.kep'; did you mean 'retention.keep'?\n",
             unknown.err);
  BOOST_TEST(ReadFile(ConfigFile(ws)) == kept);
  // Without a file, set makes one.
  Workspace fresh;
  r = RunGuardCommand(fresh, {"config", "set", "retention.auto_gc", "false"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(ReadFile(ConfigFile(fresh)) == "[retention]\nauto_gc = false\n");
}

BOOST_AUTO_TEST_CASE(ConfigJsonHoldsEachSettingItsSourceAndTheProblems) {
  Workspace ws;
  WriteConfig(ws, "[retention]\nkeep = \"7d\"\nkeep_newest = \"x\"\n");
  GuardResult r = RunGuardCommand(ws, {"config", "--json"});
  BOOST_TEST(r.exit_code == 0, DescribeResult(r));
  nlohmann::json j = nlohmann::json::parse(r.out);
  BOOST_TEST(j["path"] == ConfigFile(ws));
  BOOST_TEST(j["file_found"] == true);
  BOOST_TEST(j["settings"]["retention.keep"]["value"] == "7d");
  BOOST_TEST(j["settings"]["retention.keep"]["source"] == ConfigFile(ws) + ":2");
  BOOST_TEST(j["settings"]["retention.keep_newest"]["value"] == 3);
  // While the file has problems, the automatic gc is off, and says so.
  BOOST_TEST(j["settings"]["retention.auto_gc"]["value"] == false);
  BOOST_TEST(j["settings"]["retention.auto_gc"]["source"] == "off while " + ConfigFile(ws) + " has problems");
  BOOST_TEST(j["settings"]["shell_init.agents"]["value"].size() == 4u);
  BOOST_TEST(j["problems"].size() == 1u);
  BOOST_TEST(j["problems"][0]["key"] == "retention.keep_newest");
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
  // The default window is one second (docs/durability.md).
  GuardResult defaults = RunGuardCommand(ws, {"config"});
  BOOST_TEST(defaults.out.find("sync_every = \"1s\"") != std::string::npos, defaults.out);
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
