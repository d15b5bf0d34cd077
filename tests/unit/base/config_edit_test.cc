// `guard config set`'s edit of config.toml as text (config_edit.h): the
// value replaced in place with the line's comment kept, a new key at the
// end of its table, a new table at the end, and a file toml++ cannot read
// left alone.
#define BOOST_TEST_MODULE config_edit
#include <boost/test/unit_test.hpp>

#include "supervisor/base/config_edit.h"

using namespace guard;

namespace {

std::string Set(const std::string& text, const std::string& key, const std::string& value) {
  std::string out;
  Status s = SetConfigText(text, "config.toml", key, TomlValueText(value), &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  return out;
}

BOOST_AUTO_TEST_CASE(AValueIsReplacedInPlaceKeepingItsComment) {
  BOOST_TEST(Set("# top\n[retention]\nkeep = \"30d\"  # a month\nauto_gc = true\n", "retention.keep", "7d") ==
             "# top\n[retention]\nkeep = \"7d\"  # a month\nauto_gc = true\n");
  BOOST_TEST(Set("[shell_init]\nagents = [\n  \"claude\",\n  \"aider\",\n] # mine\n", "shell_init.agents",
                 "[\"codex\"]") == "[shell_init]\nagents = [\"codex\"] # mine\n");
  BOOST_TEST(Set("retention.keep_newest = 3\n", "retention.keep_newest", "9") == "retention.keep_newest = 9\n");
  BOOST_TEST(Set("[capture]\n  mode   =   'trace'\n", "capture.mode", "auto") == "[capture]\n  mode   =   \"auto\"\n");
}

BOOST_AUTO_TEST_CASE(ANewKeyGoesAtTheEndOfItsTableBeforeTheNextOnesComments) {
  BOOST_TEST(Set("[retention]\nkeep = \"30d\"\n\n# capture\n[capture]\nmode = \"auto\"\n", "retention.auto_gc", "false") ==
             "[retention]\nkeep = \"30d\"\nauto_gc = false\n\n# capture\n[capture]\nmode = \"auto\"\n");
  BOOST_TEST(Set("[ retention ] # the policy\n", "retention.keep", "1w") == "[ retention ] # the policy\nkeep = \"1w\"\n");
}

BOOST_AUTO_TEST_CASE(ANewTableGoesAtTheEnd) {
  BOOST_TEST(Set("", "capture.mode", "trace") == "[capture]\nmode = \"trace\"\n");
  BOOST_TEST(Set("# mine\n[retention]\nkeep = \"1d\"", "capture.sync_every", "1s") ==
             "# mine\n[retention]\nkeep = \"1d\"\n\n[capture]\nsync_every = \"1s\"\n");
}

BOOST_AUTO_TEST_CASE(AValueIsTomlWhenItReadsAsTomlElseAString) {
  BOOST_TEST(TomlValueText("3") == "3");
  BOOST_TEST(TomlValueText("true") == "true");
  BOOST_TEST(TomlValueText("\"30d\"") == "\"30d\"");
  BOOST_TEST(TomlValueText("[\"a\", \"b\"]") == "[\"a\", \"b\"]");
  BOOST_TEST(TomlValueText("30d") == "\"30d\"");
  BOOST_TEST(TomlValueText("10GiB") == "\"10GiB\"");
  BOOST_TEST(TomlValueText("say \"hi\"") == "\"say \\\"hi\\\"\"");
  BOOST_TEST(TomlValueText("1 = 2") == "\"1 = 2\"");
}

BOOST_AUTO_TEST_CASE(AFileThatIsNotTomlIsLeftAlone) {
  std::string out = "untouched";
  Status s = SetConfigText("[retention\nkeep = 1\n", "config.toml", "retention.keep", "\"1d\"", &out);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("config.toml:1: not valid TOML") == 0, s.message());
  BOOST_TEST(s.message().find("mend it first") != std::string::npos, s.message());
}

}  // namespace
