// `guard config`: the effective settings, one `key = value` line each, with
// where each came from (a flag, config.toml and its line, or the built-in
// default), and the path of the file guard reads; `--json` the same as an
// object. `guard config get KEY` prints one value; `guard config set KEY
// VALUE` checks VALUE as guard would read it, then writes it into the file,
// keeping the rest of it as it was (config_edit.h).
#pragma once

#include <string>

#include "supervisor/base/config.h"

namespace guard {

class ConfigCommand {
 public:
  static const char* const kSummary;
  struct Options {
    std::string action;  // "", "get" or "set"
    std::string key;
    std::string value;
    bool json = false;
  };
  ConfigCommand(const Settings& settings, Options options) : settings_(settings), options_(std::move(options)) {}
  int Run();

 private:
  int Print() const;
  int PrintJson() const;
  int Get() const;
  int Set() const;
  // The usage error of an unknown key, with the nearest known ones; "" when it is known.
  std::string CheckKey() const;

  Settings settings_;
  Options options_;
};

}  // namespace guard
