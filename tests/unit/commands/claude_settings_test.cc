// Guard's hooks in Claude Code's settings: added without touching anything
// else, once, and removed exactly, giving back the original text.
#define BOOST_TEST_MODULE claude_settings
#include <boost/test/unit_test.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "supervisor/commands/claude_settings.h"

namespace guard {
namespace {

using Json = nlohmann::ordered_json;

const std::string kCommand = ClaudeHookCommand("/opt/guard/bin/guard");

// Settings as Claude Code writes them (JSON.stringify(x, null, 2)), with
// other keys and other hooks, including on the events guard uses.
const std::string kUserSettings = R"json({
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm test)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write \"$CLAUDE_FILE\"",
            "timeout": 30
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "env": {
    "ÉTAT": "ünïcode"
  }
}
)json";

std::string Install(const std::string& in, bool* changed = nullptr) {
  std::string out;
  bool c = false;
  Status s = InstallClaudeHooks(in, kCommand, &out, &c);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  if (changed != nullptr) *changed = c;
  return out;
}

std::string Uninstall(const std::string& in, bool* changed = nullptr, bool* now_empty = nullptr) {
  std::string out;
  bool c = false, e = false;
  Status s = UninstallClaudeHooks(in, &out, &c, &e);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  if (changed != nullptr) *changed = c;
  if (now_empty != nullptr) *now_empty = e;
  return out;
}

BOOST_AUTO_TEST_CASE(InstallAddsOneHookPerEventAfterTheUsersOwn) {
  Json j = Json::parse(Install(kUserSettings));
  // Other keys keep their values and their order.
  std::vector<std::string> keys;
  for (auto& [k, v] : j.items()) keys.push_back(k);
  BOOST_TEST((keys == std::vector<std::string>{"model", "permissions", "hooks", "env"}));
  BOOST_TEST(j["permissions"] == Json::parse(kUserSettings)["permissions"]);
  BOOST_TEST(j["hooks"]["Stop"] == Json::parse(kUserSettings)["hooks"]["Stop"]);
  const Json& post = j["hooks"]["PostToolUse"];
  BOOST_REQUIRE(post.size() == 2u);
  BOOST_TEST(post[0] == Json::parse(kUserSettings)["hooks"]["PostToolUse"][0]);
  BOOST_TEST(post[1]["matcher"] == "*");
  BOOST_TEST(post[1]["hooks"][0]["type"] == "command");
  BOOST_TEST(post[1]["hooks"][0]["command"] == kCommand);
  const Json& pre = j["hooks"]["PreToolUse"];
  BOOST_REQUIRE(pre.size() == 1u);
  BOOST_TEST(pre[0]["matcher"] == "*");
  BOOST_TEST(pre[0]["hooks"][0]["command"] == kCommand);
  const Json& prompt = j["hooks"]["UserPromptSubmit"];
  BOOST_REQUIRE(prompt.size() == 1u);
  BOOST_TEST(!prompt[0].contains("matcher"));
  BOOST_TEST(prompt[0]["hooks"][0]["command"] == kCommand);
}

BOOST_AUTO_TEST_CASE(InstallingTwiceChangesNothing) {
  std::string once = Install(kUserSettings);
  bool changed = true;
  std::string twice = Install(once, &changed);
  BOOST_TEST(!changed);
  BOOST_TEST(twice == once);
}

BOOST_AUTO_TEST_CASE(UninstallAfterInstallGivesBackTheOriginalBytes) {
  bool changed = false, now_empty = true;
  std::string back = Uninstall(Install(kUserSettings), &changed, &now_empty);
  BOOST_TEST(changed);
  BOOST_TEST(!now_empty);
  BOOST_TEST(back == kUserSettings);
}

BOOST_AUTO_TEST_CASE(UninstallKeepsWhatTheUserAddedMeanwhile) {
  Json j = Json::parse(Install(kUserSettings));
  // The user adds a hook of their own to guard's matcher group, and a key.
  j["hooks"]["UserPromptSubmit"][0]["hooks"].push_back({{"type", "command"}, {"command", "log-prompt"}});
  j["theme"] = "dark";
  Json back = Json::parse(Uninstall(j.dump(2)));
  BOOST_TEST(back["theme"] == "dark");
  BOOST_REQUIRE(back["hooks"]["UserPromptSubmit"].size() == 1u);
  BOOST_TEST(back["hooks"]["UserPromptSubmit"][0]["hooks"].size() == 1u);
  BOOST_TEST(back["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == "log-prompt");
  BOOST_TEST(back["hooks"]["PostToolUse"] == Json::parse(kUserSettings)["hooks"]["PostToolUse"]);
}

BOOST_AUTO_TEST_CASE(InstallIntoNoFileAndUninstallLeavesNothing) {
  std::string made = Install("");
  BOOST_TEST(Json::parse(made)["hooks"].size() == 3u);
  BOOST_TEST(made.back() == '\n');
  bool now_empty = false;
  std::string back = Uninstall(made, nullptr, &now_empty);
  BOOST_TEST(now_empty);
  BOOST_TEST(Json::parse(back) == Json::object());
}

BOOST_AUTO_TEST_CASE(IndentationAndMissingFinalNewlineAreKept) {
  const std::string four = "{\n    \"model\": \"sonnet\",\n    \"hooks\": {\n        \"Stop\": []\n    }\n}";
  std::string installed = Install(four);
  BOOST_TEST(installed.find("\n        \"UserPromptSubmit\"") != std::string::npos, installed);
  BOOST_TEST(installed.back() == '}');
  BOOST_TEST(Uninstall(installed) == four);
}

BOOST_AUTO_TEST_CASE(UninstallWithoutGuardHooksChangesNothing) {
  bool changed = true;
  BOOST_TEST(Uninstall(kUserSettings, &changed) == kUserSettings);
  BOOST_TEST(!changed);
  BOOST_TEST(Uninstall("", &changed) == "");
  BOOST_TEST(!changed);
}

BOOST_AUTO_TEST_CASE(SettingsThatAreNotClaudeShapedAreRefused) {
  std::string out;
  bool changed = false, empty = false;
  BOOST_TEST(!InstallClaudeHooks("{\"hooks\": [", kCommand, &out, &changed).ok());
  BOOST_TEST(!InstallClaudeHooks("[1, 2]", kCommand, &out, &changed).ok());
  BOOST_TEST(!InstallClaudeHooks("{\"hooks\": 3}", kCommand, &out, &changed).ok());
  BOOST_TEST(!InstallClaudeHooks("{\"hooks\": {\"PostToolUse\": {}}}", kCommand, &out, &changed).ok());
  BOOST_TEST(!UninstallClaudeHooks("not json", &out, &changed, &empty).ok());
}

BOOST_AUTO_TEST_CASE(GuardHookCommandsAreToldByProgramNameAndArguments) {
  BOOST_TEST(IsGuardHookCommand("guard mark --hook claude"));
  BOOST_TEST(IsGuardHookCommand(kCommand));
  BOOST_TEST(IsGuardHookCommand(ClaudeHookCommand("/home/a b/bin/guard")));
  BOOST_TEST(ClaudeHookCommand("/home/a b/bin/guard") == "'/home/a b/bin/guard' mark --hook claude");
  BOOST_TEST(!IsGuardHookCommand("noguard mark --hook claude"));
  BOOST_TEST(!IsGuardHookCommand("guard mark"));
  BOOST_TEST(!IsGuardHookCommand("echo guard mark --hook claude; rm -rf x"));
}

}  // namespace
}  // namespace guard
