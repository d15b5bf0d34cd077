// Settings: the defaults a user sets once, in one file,
// $XDG_CONFIG_HOME/guard/config.toml (else ~/.config/guard/config.toml):
//
//   [capture]
//   on_failure = "block"        # or "allow"                 (--on-capture-failure)
//   mode = "auto"               # or "trace", "preload" or "watch" (--mode, GUARD_MODE)
//   checkpoint_every = "off"    # a duration ("5m"): checkpoints while a session runs
//   hide_state = "auto"         # or "required" or "off": the state directory out of
//                               # the command's reach (GUARD_HIDE_STATE)
//   sync_every = "1s"           # "10ms" to "10s": how often what was captured is
//                               # made durable (the power-loss window, docs/durability.md)
//   [retention]
//   keep = "30d"                # sessions older than this are removed by gc (--keep)
//   max_size = "10GiB"          # the store's cap (--max-size)
//   keep_newest = 3             # sessions of each root gc never removes (--keep-newest)
//   auto_gc = true              # apply the policy after a session ends when over it
//   [shell_init]
//   agents = ["claude", "codex", "gemini", "aider"]
//
// Precedence: a command-line flag, then the file, then the built-in default;
// each Setting says where its value came from (`guard config` prints them).
// A file that cannot be read, does not parse, has an unknown key or a bad
// value is a problem named in one line (the file, the line and the key); the
// bad key keeps its built-in default and the other keys are read all the
// same. What a command does then is main.cc's (config_problems.h): a
// session refuses a bad capture.* key, nothing deletes on a default, the
// rest runs with a warning. docs/config.md has the reasons for the defaults.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace guard {

// capture.sync_every: the group commit's interval (group_commit.h) and the
// range accepted for it. The default is the durability promise of
// docs/durability.md; a longer one trades a longer power-loss window for
// fewer syncs during bursts of writes.
inline constexpr int64_t kSyncEveryDefaultNs = 1'000000000LL;
inline constexpr int64_t kSyncEveryMinNs = 10'000000LL;
inline constexpr int64_t kSyncEveryMaxNs = 10'000000000LL;

template <class T>
struct Setting {
  T value;
  std::string source = "built-in default";  // or "FILE:LINE", or "--flag"
};

// One thing wrong with the file: `key` is the setting it leaves at its
// default ("section.key", the section alone for an unknown one, "" when the
// whole file could not be read), `message` one line "PATH:LINE: ...".
struct ConfigProblem {
  std::string key;
  std::string message;
};

struct Settings {
  Setting<std::string> on_capture_failure{"block"};
  Setting<std::string> mode{"auto"};
  Setting<int64_t> checkpoint_every_ns{0};  // 0: off (one checkpoint at the end)
  Setting<std::string> hide_state{"auto"};
  Setting<int64_t> sync_every_ns{kSyncEveryDefaultNs};
  Setting<int64_t> keep_ns{30LL * 86400 * 1000000000};
  Setting<uint64_t> max_size{10ULL << 30};
  Setting<int64_t> keep_newest{3};
  Setting<bool> auto_gc{true};
  Setting<std::vector<std::string>> agents{{"claude", "codex", "gemini", "aider"}};
  std::string path;         // the file read (or looked for)
  bool file_found = false;  // whether it existed
  std::vector<ConfigProblem> problems;  // in the file's order

  // Whether a setting of the session's capture may not be what the user
  // wrote: a capture.* problem, or a file that could not be read at all.
  bool CaptureUnsure() const;
};

// The file's path per the environment ("" when neither XDG_CONFIG_HOME nor
// HOME says where). A relative XDG_CONFIG_HOME is ignored, as the XDG spec asks.
std::string ConfigPath();

// Reads `path` over the built-in defaults in *settings. A missing file is
// not an error (settings->file_found stays false). Every problem is added
// to settings->problems, the good keys read all the same; the first one is
// also the Status returned.
Status LoadConfigFile(const std::string& path, Settings* settings);
// The same from text already read (`path` only names it in messages).
Status ParseConfig(std::string_view text, const std::string& path, Settings* settings);

// Checks a mode named on the command line or in the file: "" when it can
// run, else why not.
std::string CheckMode(const std::string& mode);

// Checks a hide_state value: "" when it is one, else why not.
std::string CheckHideState(const std::string& value);

// The names of the keys, in the order `guard config` prints them.
std::vector<std::string> ConfigKeyNames();

// The value of `key` in the file's syntax ("\"30d\"", "3", "true", an
// array); false when there is no such key.
bool PrintSetting(const Settings& settings, const std::string& key, std::string* value, std::string* source);

// Every setting as `key = value  # source`, one a line, in the file's syntax
// (so that the output pasted into config.toml reads back the same).
std::string DescribeSettings(const Settings& settings);

// A TOML basic string: "..." with \ " and control characters escaped.
std::string TomlBasicString(const std::string& s);

}  // namespace guard
