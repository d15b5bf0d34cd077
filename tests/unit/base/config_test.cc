// config.toml: values over the defaults with their source, one clear line
// for every kind of mistake, and the units durations and sizes are written in.
#define BOOST_TEST_MODULE config
#include <boost/test/unit_test.hpp>

#include "supervisor/base/config.h"
#include "supervisor/base/units.h"

using namespace guard;

namespace {

Status Parse(const std::string& text, Settings* s) { return ParseConfig(text, "/home/ada/.config/guard/config.toml", s); }

BOOST_AUTO_TEST_CASE(FileValuesOverrideTheDefaultsAndNameTheirLine) {
  Settings s;
  Status st = Parse(
      "# mine\n"
      "[capture]\n"
      "on_failure = \"allow\"\n"
      "checkpoint_every = \"5m\"\n"
      "[retention]\n"
      "keep = \"2w\"\n"
      "max_size = \"500MB\"\n"
      "keep_newest = 5\n"
      "auto_gc = false\n"
      "[shell_init]\n"
      "agents = [\"claude\", \"opencode\"]\n",
      &s);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  BOOST_TEST(s.on_capture_failure.value == "allow");
  BOOST_TEST(s.on_capture_failure.source == "/home/ada/.config/guard/config.toml:3");
  BOOST_TEST(s.checkpoint_every_ns.value == 300LL * 1000000000);
  BOOST_TEST(s.keep_ns.value == 14LL * 86400 * 1000000000);
  BOOST_TEST(s.max_size.value == 500000000u);
  BOOST_TEST(s.keep_newest.value == 5);
  BOOST_TEST(!s.auto_gc.value);
  BOOST_TEST(s.agents.value == (std::vector<std::string>{"claude", "opencode"}));
  BOOST_TEST(s.mode.value == "auto");
  BOOST_TEST(s.mode.source == "built-in default");
}

BOOST_AUTO_TEST_CASE(UnknownKeyIsOneLineNamingFileLineAndKey) {
  Settings s;
  Status st = Parse("[retention]\nkeep = \"30d\"\nkep = \"1d\"\n", &s);
  BOOST_TEST(!st.ok());
  BOOST_TEST(st.message().find("/home/ada/.config/guard/config.toml:3: unknown key 'retention.kep'") == 0,
             st.message());
  BOOST_TEST(st.message().find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(UnknownSectionIsRefused) {
  Settings s;
  Status st = Parse("\n[colours]\nx = 1\n", &s);
  BOOST_TEST(st.message().find("config.toml:2: unknown section [colours]") != std::string::npos, st.message());
}

BOOST_AUTO_TEST_CASE(MalformedTomlNamesFileAndLine) {
  Settings s;
  Status st = Parse("[capture]\non_failure = \"block\"\nmode = trace\n", &s);
  BOOST_TEST(!st.ok());
  BOOST_TEST(st.message().find("/home/ada/.config/guard/config.toml:3: not valid TOML") == 0, st.message());
}

BOOST_AUTO_TEST_CASE(BadValuesAreRefusedWithTheKey) {
  struct Case {
    const char* text;
    const char* expect;
  };
  for (const Case& c : {Case{"[retention]\nkeep = \"30\"\n", ":2: retention.keep: '30' is not a duration"},
                        Case{"[retention]\nkeep = 30\n", ":2: retention.keep: must be a duration"},
                        Case{"[retention]\nmax_size = \"big\"\n", ":2: retention.max_size: must be a size"},
                        Case{"[retention]\nkeep_newest = -1\n", ":2: retention.keep_newest: must be a whole number"},
                        Case{"[retention]\nauto_gc = \"yes\"\n", ":2: retention.auto_gc: must be true or false"},
                        Case{"[capture]\non_failure = \"ignore\"\n", ":2: capture.on_failure: 'ignore' is neither"},
                        Case{"[capture]\ncheckpoint_every = \"often\"\n", ":2: capture.checkpoint_every: 'often'"},
                        Case{"[capture]\nsync_every = \"100\"\n", ":2: capture.sync_every: '100' is not a duration"},
                        Case{"[capture]\nsync_every = \"1m\"\n", ":2: capture.sync_every: '1m' is outside \"10ms\" to \"10s\""},
                        Case{"[capture]\nsync_every = \"5ms\"\n", ":2: capture.sync_every: '5ms' is outside"},
                        Case{"[shell_init]\nagents = \"claude\"\n", ":2: shell_init.agents: must be an array"}}) {
    Settings s;
    Status st = Parse(c.text, &s);
    BOOST_TEST(st.message().find(c.expect) != std::string::npos, c.text << " -> " << st.message());
  }
}

BOOST_AUTO_TEST_CASE(TheThreeModesAreAcceptedAndAnyOtherIsRefused) {
  Settings s;
  BOOST_TEST(Parse("[capture]\nmode = \"preload\"\n", &s).ok());
  BOOST_TEST(s.mode.value == "preload");
  BOOST_TEST(Parse("[capture]\nmode = \"trace\"\n", &s).ok());
  BOOST_TEST(s.mode.value == "trace");
  BOOST_TEST(CheckMode("auto").empty());
  Status st = Parse("[capture]\nmode = \"ptrace\"\n", &s);
  BOOST_TEST(st.message().find(":2: capture.mode: unknown mode 'ptrace' (auto, trace, preload or watch)") != std::string::npos,
             st.message());
  BOOST_TEST(!CheckMode("ptrace").empty());
}

BOOST_AUTO_TEST_CASE(MissingFileLeavesTheDefaults) {
  Settings s;
  BOOST_TEST(LoadConfigFile("/nonexistent/guard/config.toml", &s).ok());
  BOOST_TEST(!s.file_found);
  BOOST_TEST(s.keep_ns.source == "built-in default");
}

BOOST_AUTO_TEST_CASE(PrintedSettingsReadBackAsTheSameValues) {
  Settings s;
  BOOST_REQUIRE(Parse("[retention]\nkeep = \"36h\"\nmax_size = 123456789\n[capture]\ncheckpoint_every = \"90s\"\n"
                      "sync_every = \"250ms\"\n",
                      &s)
                    .ok());
  BOOST_TEST(s.sync_every_ns.value == 250000000);
  Settings again;
  Status st = Parse(DescribeSettings(s), &again);
  BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString() << "\n" << DescribeSettings(s));
  BOOST_TEST(again.keep_ns.value == s.keep_ns.value);
  BOOST_TEST(again.max_size.value == s.max_size.value);
  BOOST_TEST(again.checkpoint_every_ns.value == s.checkpoint_every_ns.value);
  BOOST_TEST(again.sync_every_ns.value == s.sync_every_ns.value);
  BOOST_TEST(again.agents.value == s.agents.value);
  BOOST_TEST(DescribeSettings(s).find("retention.keep = \"36h\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(DurationsNeedAUnitAndSizesTakeBothPrefixes) {
  int64_t ns = 0;
  BOOST_TEST((ParseDuration("30d", &ns) && ns == 30LL * 86400 * 1000000000));
  BOOST_TEST((ParseDuration("1.5h", &ns) && ns == 5400LL * 1000000000));
  BOOST_TEST((ParseDuration("0", &ns) && ns == 0));
  BOOST_TEST(!ParseDuration("30", &ns));
  BOOST_TEST(!ParseDuration("-1d", &ns));
  BOOST_TEST(!ParseDuration("1y", &ns));
  uint64_t b = 0;
  BOOST_TEST((ParseSize("10GiB", &b) && b == (10ULL << 30)));
  BOOST_TEST((ParseSize("10G", &b) && b == (10ULL << 30)));
  BOOST_TEST((ParseSize("500MB", &b) && b == 500000000u));
  BOOST_TEST((ParseSize("4096", &b) && b == 4096u));
  BOOST_TEST((ParseSize("1.5 KiB", &b) && b == 1536u));
  BOOST_TEST(!ParseSize("10 parsecs", &b));
  BOOST_TEST(FormatDuration(30LL * 86400 * 1000000000) == "30d");
  BOOST_TEST((ParseDuration("250ms", &ns) && ns == 250000000));
  BOOST_TEST((ParseDuration("1.5s", &ns) && ns == 1500000000));
  BOOST_TEST(FormatDuration(250000000) == "250ms");
  BOOST_TEST(FormatDuration(2000000000) == "2s");
  BOOST_TEST(FormatSize(10ULL << 30) == "10.0 GiB");
}

}  // namespace
