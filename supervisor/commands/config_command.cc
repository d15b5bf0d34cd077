#include "supervisor/commands/config_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "common/file_io.h"
#include "supervisor/base/config_edit.h"
#include "supervisor/commands/command_words.h"
#include "supervisor/commands/subcommand.h"

namespace guard {
namespace {

// A setting's value (as config.h prints it, TOML) as JSON.
nlohmann::json ToJson(const std::string& toml_text) {
  try {
    toml::table t = toml::parse("v = " + toml_text);
    const toml::node& v = *t.get("v");
    if (auto s = v.value<std::string>(); v.is_string() && s) return *s;
    if (auto i = v.value<int64_t>(); v.is_integer() && i) return *i;
    if (auto b = v.value<bool>(); v.is_boolean() && b) return *b;
    if (const toml::array* a = v.as_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const toml::node& e : *a) out.push_back(e.value<std::string>().value_or(""));
      return out;
    }
  } catch (const toml::parse_error&) {
  }
  return toml_text;
}

// A value for a person or a script: a string without its quotes.
std::string Plain(const std::string& toml_text) {
  nlohmann::json j = ToJson(toml_text);
  return j.is_string() ? j.get<std::string>() : toml_text;
}

}  // namespace

const char* const ConfigCommand::kSummary =
    "Print the effective settings and where each comes from (flag, config.toml line, default); "
    "get or set one in config.toml";

int ConfigCommand::Run() {
  if (options_.action == "get") return Get();
  if (options_.action == "set") return Set();
  return options_.json ? PrintJson() : Print();
}

int ConfigCommand::Print() const {
  if (settings_.path.empty()) {
    std::printf("# no configuration file: neither XDG_CONFIG_HOME nor HOME is set\n");
  } else {
    std::printf("# %s%s\n", settings_.path.c_str(), settings_.file_found ? "" : " (absent: built-in defaults)");
  }
  std::fputs(DescribeSettings(settings_).c_str(), stdout);
  return 0;
}

int ConfigCommand::PrintJson() const {
  nlohmann::json out;
  out["path"] = settings_.path;
  out["file_found"] = settings_.file_found;
  out["settings"] = nlohmann::json::object();
  for (const std::string& key : ConfigKeyNames()) {
    std::string value, source;
    PrintSetting(settings_, key, &value, &source);
    out["settings"][key] = {{"value", ToJson(value)}, {"source", source}};
  }
  out["problems"] = nlohmann::json::array();
  for (const ConfigProblem& p : settings_.problems) out["problems"].push_back({{"key", p.key}, {"message", p.message}});
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

std::string ConfigCommand::CheckKey() const {
  std::vector<std::string> keys = ConfigKeyNames();
  if (std::find(keys.begin(), keys.end(), options_.key) != keys.end()) return "";
  std::string error = "config " + options_.action + ": unknown key '" + options_.key + "'";
  std::vector<std::string> similar = SimilarCommands(options_.key, keys);
  if (similar.size() == 1) return error + "; did you mean '" + similar[0] + "'?";
  std::string all;
  for (const std::string& k : keys) all += (all.empty() ? "" : ", ") + k;
  return error + " (known keys: " + all + ")";
}

int ConfigCommand::Get() const {
  if (std::string error = CheckKey(); !error.empty()) return UsageError(error);
  std::string value, source;
  PrintSetting(settings_, options_.key, &value, &source);
  std::printf("%s\n", Plain(value).c_str());
  return 0;
}

int ConfigCommand::Set() const {
  if (std::string error = CheckKey(); !error.empty()) return UsageError(error);
  // The value as guard will read it, checked alone first: a value guard
  // would refuse never reaches the file.
  const std::string value_text = TomlValueText(options_.value);
  const size_t dot = options_.key.find('.');
  Settings alone;
  (void)ParseConfig("[" + options_.key.substr(0, dot) + "]\n" + options_.key.substr(dot + 1) + " = " + value_text + "\n",
              "VALUE", &alone);
  if (!alone.problems.empty()) {
    std::string why = alone.problems.front().message;
    why = why.substr(why.find(": ") + 2);  // "VALUE:2: key: why" -> "key: why"
    return UsageError("config set: " + why);
  }
  if (settings_.path.empty()) {
    std::fprintf(stderr, "guard: config set: no configuration file: neither XDG_CONFIG_HOME nor HOME is set\n");
    return kExitFailed;
  }
  std::string text;
  if (Status s = ReadFileToString(settings_.path, &text); !s.ok() && !s.IsNotFound()) {
    std::fprintf(stderr, "guard: config set: %s: %s\n", settings_.path.c_str(), s.ToString().c_str());
    return kExitFailed;
  }
  std::string edited;
  if (Status s = SetConfigText(text, settings_.path, options_.key, value_text, &edited); !s.ok()) {
    std::fprintf(stderr, "guard: config set: %s\n", s.message().c_str());
    return kExitFailed;
  }
  // The file as it will be must give the key this value.
  Settings after;
  (void)ParseConfig(edited, settings_.path, &after);
  std::string wanted, got, source;
  PrintSetting(alone, options_.key, &wanted, &source);
  PrintSetting(after, options_.key, &got, &source);
  if (got != wanted) {
    std::fprintf(stderr, "guard: config set: %s would not read back as %s; the file is unchanged\n",
                 options_.key.c_str(), wanted.c_str());
    return kExitFailed;
  }
  std::string dir = settings_.path.substr(0, settings_.path.rfind('/'));
  Status s = MakeDirs(dir, 0755);
  if (s.ok()) s = WriteFileAtomic(settings_.path, edited, 0644);
  if (!s.ok()) {
    std::fprintf(stderr, "guard: config set: %s: %s\n", settings_.path.c_str(), s.ToString().c_str());
    return kExitFailed;
  }
  std::printf("%s = %s  # %s\n", options_.key.c_str(), wanted.c_str(), source.c_str());
  return 0;
}

// The command line of `guard config` (subcommand.h).
namespace {

class ConfigSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description(ConfigCommand::kSummary);
    cmd->add_flag("--json", options_.json, "Print the settings, their sources and the file's problems as JSON");
    CLI::App* get = cmd->add_subcommand("get", "Print the value of KEY (section.key, as guard config lists them)");
    get->add_option("key", options_.key, "The setting, such as retention.keep")->required()->type_name("KEY");
    get->callback([this] { options_.action = "get"; });
    CLI::App* set = cmd->add_subcommand("set", "Write KEY = VALUE into config.toml, keeping its comments");
    set->add_option("key", options_.key, "The setting, such as retention.keep")->required()->type_name("KEY");
    set->add_option("value", options_.value, "Its value as in the file (7d, true, 3, [\"claude\"])")
        ->required()
        ->type_name("VALUE");
    set->callback([this] { options_.action = "set"; });
    cmd->require_subcommand(0, 1);
  }
  int Run(const Invocation& invocation) override { return ConfigCommand(*invocation.settings, options_).Run(); }

 private:
  ConfigCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeConfigSubcommand() { return std::make_unique<ConfigSubcommand>(); }

}  // namespace guard
