// The command line's shared parts (subcommand.h) and guard's own options
// (RunSubcommand): the usage errors they find after a parse, and how the
// flags and the environment lie over the configuration file's settings.
#define BOOST_TEST_MODULE subcommand
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "supervisor/commands/run_command.h"
#include "supervisor/commands/subcommand.h"

namespace guard {
namespace {

// guard's App as main.cc makes it, with one subcommand taking --session
// and --root as the review commands do.
struct Line {
  CLI::App app{"guard"};
  SharedOptions shared;
  RunSubcommand run;
  std::string session;
  Line() {
    run.Declare(&app, &shared);
    CLI::App* show = app.add_subcommand("show");
    shared.AddSession(show, &session, kViewSessionHelp);
    shared.AddRoot(show);
    app.add_subcommand("config");
    app.require_subcommand(0, 1);
  }
  Line& Parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    return *this;
  }
};

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

BOOST_AUTO_TEST_CASE(EmptySessionIsAUsageError) {
  Line line;
  line.Parse({"show", "--session", ""});
  BOOST_TEST(line.shared.CheckSessions() == "--session needs a session: an id, a unique prefix, last or last~N");
  Line named;
  named.Parse({"show", "--session", "last~1"});
  BOOST_TEST(named.shared.CheckSessions() == "");
  BOOST_TEST(named.session == "last~1");
}

BOOST_AUTO_TEST_CASE(RootBeforeOrAfterTheSubcommandIsOneRoot) {
  std::string root;
  BOOST_TEST(Line().Parse({"--root", "/a", "show"}).shared.MergeRoots("/a", &root) == "");
  BOOST_TEST(root == "/a");
  Line after;
  after.Parse({"show", "--root", "/b"});
  BOOST_TEST(after.shared.MergeRoots(after.run.root(), &root) == "");
  BOOST_TEST(root == "/b");
  Line same;
  same.Parse({"--root", "/a", "show", "--root", "/a"});
  BOOST_TEST(same.shared.MergeRoots(same.run.root(), &root) == "");
  BOOST_TEST(root == "/a");
  Line twice;
  twice.Parse({"--root", "/a", "show", "--root", "/b"});
  BOOST_TEST(twice.shared.MergeRoots(twice.run.root(), &root) == "--root given twice, as /a and as /b");
}

BOOST_AUTO_TEST_CASE(SessionOptionGivenNamesTheFirstOfThem) {
  BOOST_TEST(Line().Parse({"show"}).run.SessionOptionGiven() == nullptr);
  BOOST_TEST(Line().Parse({"--checkpoint-every", "5m", "show"}).run.SessionOptionGiven() == nullptr);
  BOOST_TEST(std::string(Line().Parse({"--mode", "trace", "show"}).run.SessionOptionGiven()) == "--mode");
  BOOST_TEST(std::string(Line().Parse({"--mode", "trace", "-q", "show"}).run.SessionOptionGiven()) == "--quiet");
  BOOST_TEST(std::string(Line().Parse({"--on-capture-failure", "allow", "config"}).run.SessionOptionGiven()) ==
             "--on-capture-failure");
}

BOOST_AUTO_TEST_CASE(FlagsWinOverTheEnvironmentWhichWinsOverTheFile) {
  ScopedEnv mode("GUARD_MODE", "trace");
  Settings from_env;
  from_env.mode = {"preload", "config.toml:2"};
  BOOST_TEST(Line().Parse({"--", "true"}).run.Override(&from_env) == "");
  BOOST_TEST(from_env.mode.value == "trace");
  BOOST_TEST(from_env.mode.source == "GUARD_MODE");

  Settings from_flag;
  BOOST_TEST(Line().Parse({"--mode", "auto", "--on-capture-failure", "allow", "--", "true"}).run.Override(&from_flag) ==
             "");
  BOOST_TEST(from_flag.mode.value == "auto");
  BOOST_TEST(from_flag.mode.source == "--mode");
  BOOST_TEST(from_flag.on_capture_failure.value == "allow");
  BOOST_TEST(from_flag.on_capture_failure.source == "--on-capture-failure");
}

BOOST_AUTO_TEST_CASE(UnknownModeOrHideStateInTheEnvironmentIsAUsageError) {
  Settings settings;
  {
    ScopedEnv mode("GUARD_MODE", "fast");
    BOOST_TEST(Line().Parse({"--", "true"}).run.Override(&settings) ==
               "GUARD_MODE: unknown mode 'fast' (auto, trace, preload or watch)");
  }
  {
    ScopedEnv hide("GUARD_HIDE_STATE", "maybe");
    BOOST_TEST(Line().Parse({"--", "true"}).run.Override(&settings).rfind("GUARD_HIDE_STATE: ", 0) == 0u);
  }
}

BOOST_AUTO_TEST_CASE(CheckpointEveryTakesADurationOrOff) {
  Settings every;
  BOOST_TEST(Line().Parse({"--checkpoint-every", "30s", "--", "true"}).run.Override(&every) == "");
  BOOST_TEST(every.checkpoint_every_ns.value == 30'000'000'000LL);
  Settings off;
  off.checkpoint_every_ns = {60'000'000'000LL, "config.toml:3"};
  BOOST_TEST(Line().Parse({"--checkpoint-every", "off", "--", "true"}).run.Override(&off) == "");
  BOOST_TEST(off.checkpoint_every_ns.value == 0);
  BOOST_TEST(off.checkpoint_every_ns.source == "--checkpoint-every");
  Settings bad;
  BOOST_TEST(Line().Parse({"--checkpoint-every", "soon", "--", "true"}).run.Override(&bad) ==
             "--checkpoint-every: not a duration (5m, 30s, 1h) nor off: soon");
}

}  // namespace
}  // namespace guard
